#include <openssl/evp.h>

/* SHA-256 of `count` bytes into `digest` (32 bytes), with OpenSSL's one-shot EVP call (the
   SHA256() shortcut is deprecated in OpenSSL 3); 1 on success. */
static inline int cupcake_sha256(const void *bytes, size_t count, unsigned char *digest) {
    unsigned int size = 0;
    return EVP_Digest(bytes, count, digest, &size, EVP_sha256(), NULL) == 1 && size == 32;
}
