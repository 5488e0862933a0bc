#include <curl/curl.h>
#include <dlfcn.h>
#include <stddef.h>

/* libcurl is opened when the first request is made (dlopen), not linked into the executable:
   loading it and the libraries it needs (OpenSSL, GnuTLS, nghttp2, Kerberos, LDAP, ...) takes
   longer than the rest of a command's start-up, and `cupcake price` or `cupcake --help` never
   use it. The functions the client calls are looked up once into this table; the calls go
   through the typed wrappers below (two of libcurl's functions are variadic, which Swift cannot
   call). The headers still come from the Debian package (libcurl4-openssl-dev), and the library
   loaded is the one it names (SONAME libcurl.so.4). */
struct cupcake_curl {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    void (*easy_reset)(CURL *handle);
    CURLcode (*easy_perform)(CURL *handle);
    const char *(*easy_strerror)(CURLcode code);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *text);
    void (*slist_free_all)(struct curl_slist *list);
    curl_version_info_data *(*version_info)(CURLversion age);
    time_t (*getdate)(const char *text, const time_t *unused);
};

/* Opens libcurl and fills `api`; returns NULL, or dlerror's message when it cannot. */
static inline const char *cupcake_curl_open(struct cupcake_curl *api) {
    void *library = dlopen("libcurl.so.4", RTLD_LAZY | RTLD_LOCAL);
    if (library == NULL) return dlerror();
#define CUPCAKE_CURL_SYMBOL(field, name)                                      \
    *(void **)(&api->field) = dlsym(library, name);                           \
    if (api->field == NULL) return "libcurl.so.4 lacks " name;
    CUPCAKE_CURL_SYMBOL(global_init, "curl_global_init")
    CUPCAKE_CURL_SYMBOL(easy_init, "curl_easy_init")
    CUPCAKE_CURL_SYMBOL(easy_cleanup, "curl_easy_cleanup")
    CUPCAKE_CURL_SYMBOL(easy_reset, "curl_easy_reset")
    CUPCAKE_CURL_SYMBOL(easy_perform, "curl_easy_perform")
    CUPCAKE_CURL_SYMBOL(easy_strerror, "curl_easy_strerror")
    CUPCAKE_CURL_SYMBOL(easy_setopt, "curl_easy_setopt")
    CUPCAKE_CURL_SYMBOL(easy_getinfo, "curl_easy_getinfo")
    CUPCAKE_CURL_SYMBOL(slist_append, "curl_slist_append")
    CUPCAKE_CURL_SYMBOL(slist_free_all, "curl_slist_free_all")
    CUPCAKE_CURL_SYMBOL(version_info, "curl_version_info")
    CUPCAKE_CURL_SYMBOL(getdate, "curl_getdate")
#undef CUPCAKE_CURL_SYMBOL
    return NULL;
}

static inline CURLcode cupcake_curl_global_init(const struct cupcake_curl *api, long flags) {
    return api->global_init(flags);
}

static inline CURL *cupcake_curl_easy_init(const struct cupcake_curl *api) { return api->easy_init(); }

static inline void cupcake_curl_easy_cleanup(const struct cupcake_curl *api, CURL *handle) {
    api->easy_cleanup(handle);
}

static inline void cupcake_curl_easy_reset(const struct cupcake_curl *api, CURL *handle) { api->easy_reset(handle); }

static inline CURLcode cupcake_curl_easy_perform(const struct cupcake_curl *api, CURL *handle) {
    return api->easy_perform(handle);
}

static inline const char *cupcake_curl_easy_strerror(const struct cupcake_curl *api, CURLcode code) {
    return api->easy_strerror(code);
}

static inline struct curl_slist *cupcake_curl_slist_append(
    const struct cupcake_curl *api, struct curl_slist *list, const char *text) {
    return api->slist_append(list, text);
}

static inline void cupcake_curl_slist_free_all(const struct cupcake_curl *api, struct curl_slist *list) {
    api->slist_free_all(list);
}

/* The libcurl version string ("7.88.1"). */
static inline const char *cupcake_curl_version(const struct cupcake_curl *api) {
    return api->version_info(CURLVERSION_NOW)->version;
}

/* An HTTP date (RFC 9110's IMF-fixdate and the two obsolete forms) as seconds since the epoch, or -1. */
static inline time_t cupcake_curl_getdate(const struct cupcake_curl *api, const char *text) {
    return api->getdate(text, NULL);
}

/* curl_easy_setopt, one typed wrapper per kind of argument the checkout client uses. */
static inline CURLcode cupcake_curl_set_long(const struct cupcake_curl *api, CURL *handle, CURLoption option,
    long value) {
    return api->easy_setopt(handle, option, value);
}

static inline CURLcode cupcake_curl_set_pointer(const struct cupcake_curl *api, CURL *handle, CURLoption option,
    void *value) {
    return api->easy_setopt(handle, option, value);
}

static inline CURLcode cupcake_curl_set_string(const struct cupcake_curl *api, CURL *handle, CURLoption option,
    const char *value) {
    return api->easy_setopt(handle, option, value);
}

static inline CURLcode cupcake_curl_set_size(const struct cupcake_curl *api, CURL *handle, CURLoption option,
    curl_off_t value) {
    return api->easy_setopt(handle, option, value);
}

typedef size_t (*cupcake_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode cupcake_curl_set_callback(const struct cupcake_curl *api, CURL *handle, CURLoption option,
    cupcake_curl_data_callback value) {
    return api->easy_setopt(handle, option, value);
}

static inline long cupcake_curl_response_code(const struct cupcake_curl *api, CURL *handle) {
    long code = 0;
    if (api->easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) return 0;
    return code;
}

typedef curl_socket_t (*cupcake_curl_opensocket_callback)(void *context, curlsocktype purpose,
    struct curl_sockaddr *address);

/* CURLOPT_OPENSOCKETFUNCTION: libcurl asks it for every socket it opens, with the address it is
   about to connect to (after name resolution), so a refused address is never connected to. */
static inline CURLcode cupcake_curl_set_opensocket(const struct cupcake_curl *api, CURL *handle,
    cupcake_curl_opensocket_callback value) {
    return api->easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, value);
}
