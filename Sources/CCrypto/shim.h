#include <openssl/evp.h>
/* SHA-256, fetched from OpenSSL's providers once per thread (an implicit fetch on every call took
   locks and a parameter search each time: 4% of the server's time), with one digest context per
   thread, reused. Both live in the function: a header's own static variables are not emitted for
   Swift. */
static inline int cupcake_sha256(const void *bytes, size_t count, unsigned char *digest) {
    static __thread EVP_MD *algorithm;
    static __thread EVP_MD_CTX *context;
    if (algorithm == NULL && (algorithm = EVP_MD_fetch(NULL, "SHA256", NULL)) == NULL) return 0;
    if (context == NULL && (context = EVP_MD_CTX_new()) == NULL) return 0;
    unsigned int size = 0;
    return EVP_DigestInit_ex2(context, algorithm, NULL) == 1 && EVP_DigestUpdate(context, bytes, count) == 1
        && EVP_DigestFinal_ex(context, digest, &size) == 1 && size == 32;
}

#include <openssl/rand.h>

/* `count` random bytes from OpenSSL's DRBG (seeded from the kernel, per thread, no system call
   per request); 1 on success. */
static inline int cupcake_random_bytes(unsigned char *bytes, int count) {
    return RAND_bytes(bytes, count);
}

/* HMAC-SHA256 of `bytes` with `key` into `mac` (32 bytes), through OpenSSL 3's one-shot MAC
   interface; 1 on success. Signs webhook deliveries. */
static inline int cupcake_hmac_sha256(const void *key, size_t key_count, const void *bytes, size_t count,
    unsigned char *mac) {
    size_t size = 0;
    return EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key, key_count, bytes, count, mac, 32, &size) != NULL
        && size == 32;
}

/* Standard base64 (with padding) of `count` bytes into `out`, which has room for
   4 * ((count + 2) / 3) + 1 bytes; returns the length written. */
static inline int cupcake_base64_encode(const unsigned char *bytes, int count, unsigned char *out) {
    return EVP_EncodeBlock(out, bytes, count);
}

/* Standard base64 of `count` characters (a multiple of 4) into `out` (3 * count / 4 bytes);
   returns the bytes decoded, padding included, or -1 for text that is not base64. */
static inline int cupcake_base64_decode(const unsigned char *text, int count, unsigned char *out) {
    return EVP_DecodeBlock(out, text, count);
}
