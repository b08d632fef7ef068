#ifndef WATCHRELAY_CCRYPTO_SHIM_H
#define WATCHRELAY_CCRYPTO_SHIM_H
/* SHA-256 for hashing device tokens, from OpenSSL's libcrypto (already a dependency of
 * libwebsockets). OpenSSL 3 deprecates the SHA256_* functions in favour of EVP_Digest, but
 * EVP fetches its implementation through the provider machinery, whose first use makes about
 * 2 MiB more of libcrypto resident in every relay (measured: 1.4 -> 3.4 MiB after one pairing).
 * SHA256_Init/Update/Final are the same digest code, called directly. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>

static inline int relay_sha256(const void *data, size_t len, unsigned char out[32]) {
    SHA256_CTX context;
    if (SHA256_Init(&context) != 1) return 0;
    if (SHA256_Update(&context, data, len) != 1) return 0;
    return SHA256_Final(out, &context);
}

#endif
