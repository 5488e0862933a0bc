#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
   wrapper per kind of argument the checkout client uses. */
static inline CURLcode cupcake_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode cupcake_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode cupcake_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode cupcake_curl_set_size(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*cupcake_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode cupcake_curl_set_callback(CURL *handle, CURLoption option, cupcake_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline long cupcake_curl_response_code(CURL *handle) {
    long code = 0;
    if (curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) return 0;
    return code;
}
