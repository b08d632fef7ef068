#ifndef WATCHRELAY_CCRYPTO_SHIM_H
#define WATCHRELAY_CCRYPTO_SHIM_H
/* SHA-256 for hashing device tokens, from OpenSSL's libcrypto (already a
 * dependency of libwebsockets). EVP_Digest is the non-deprecated OpenSSL 3 API. */
#include <openssl/evp.h>

static inline int relay_sha256(const void *data, size_t len, unsigned char out[32]) {
    unsigned int outLen = 0;
    return EVP_Digest(data, len, out, &outLen, EVP_sha256(), NULL);
}

#endif
