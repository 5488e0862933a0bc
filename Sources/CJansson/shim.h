#include <jansson.h>

/* jansson's reference counting is inline in its header (json_decref); this names it for Swift. */
static inline void cupcake_json_release(json_t *value) { json_decref(value); }

/* jansson's type tag (json_typeof is a macro). */
static inline json_type cupcake_json_type(const json_t *value) { return json_typeof(value); }
