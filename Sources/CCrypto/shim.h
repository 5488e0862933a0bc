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
