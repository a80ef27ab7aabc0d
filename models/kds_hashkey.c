/* kds_hashkey.c - Kinesis hash keys (see kds_hashkey.h): MD5 of a partition key read as
 * a big-endian 128-bit integer, decimal and hex conversions, and CreateStream's even
 * split of the key space.
 */
#include "kds_hashkey.h"

#include <math.h>
#include <string.h>

#include <nettle/md5.h>

#include "sim_err.h"

kds_hashkey kds_hashkey_from_md5(const void *key, size_t len)
{
    struct md5_ctx ctx;
    uint8_t digest[MD5_DIGEST_SIZE];

    md5_init(&ctx);
    md5_update(&ctx, len, (const uint8_t *)key);
    md5_digest(&ctx, sizeof digest, digest);

    /* Kinesis reads the digest as a big-endian number: the first byte is the most
     * significant, so the key's leading hex digits are the digest's. */
    kds_hashkey k = 0;
    for (size_t i = 0; i < sizeof digest; i++)
        k = (k << 8) | digest[i];
    return k;
}

int kds_hashkey_parse_dec(const char *text, kds_hashkey *out)
{
    if (text == NULL || text[0] == '\0')
        return SIM_ESYNTAX;
    /* Validate every character before converting, so that junk after a long run of
     * digits ("9999...9x") is a syntax error rather than an overflow. */
    for (const char *p = text; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return SIM_ESYNTAX;
    }

    kds_hashkey v = 0;
    for (const char *p = text; *p != '\0'; p++) {
        unsigned d = (unsigned)(*p - '0');
        /* v * 10 + d must stay <= 2^128 - 1. */
        if (v > (KDS_HASHKEY_MAX - d) / 10)
            return SIM_ERANGE;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

char *kds_hashkey_to_dec(char buf[KDS_HASHKEY_DEC_LEN], kds_hashkey k)
{
    /* Peel off 19 digits at a time (10^19 is the largest power of ten below 2^64), so
     * only three 128-bit divisions are needed and the rest is 64-bit arithmetic. */
    const uint64_t chunk = UINT64_C(10000000000000000000);
    char tmp[KDS_HASHKEY_DEC_LEN];
    size_t n = 0;

    do {
        uint64_t part = (uint64_t)(k % chunk);
        k /= chunk;
        /* Every chunk but the most significant one is zero-padded to 19 digits. */
        for (int i = 0; i < 19 && (k != 0 || part != 0); i++) {
            tmp[n++] = (char)('0' + part % 10);
            part /= 10;
        }
    } while (k != 0);
    if (n == 0)
        tmp[n++] = '0';

    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
    return buf;
}

char *kds_hashkey_to_hex(char buf[KDS_HASHKEY_HEX_LEN], kds_hashkey k)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 31; i >= 0; i--) {
        buf[i] = digits[(unsigned)(k & 0xf)];
        k >>= 4;
    }
    buf[32] = '\0';
    return buf;
}

/* floor(2^128 / n), which for n == 1 is 2^128 and wraps to 0; the only caller that
 * can see n == 1 multiplies it by i == 0. 2^128 = MAX + 1, and adding one to MAX
 * carries into the quotient exactly when MAX's remainder is n - 1. */
static kds_hashkey even_step(uint32_t n)
{
    return KDS_HASHKEY_MAX / n + ((KDS_HASHKEY_MAX % n) == n - 1 ? 1 : 0);
}

kds_hashkey kds_hashkey_even_start(uint32_t i, uint32_t n)
{
    SIM_ASSERT(n >= 1 && i < n);
    return (kds_hashkey)i * even_step(n);
}

kds_hashkey kds_hashkey_even_end(uint32_t i, uint32_t n)
{
    SIM_ASSERT(n >= 1 && i < n);
    if (i == n - 1)
        return KDS_HASHKEY_MAX;
    return kds_hashkey_even_start(i + 1, n) - 1;
}

double kds_hashkey_share(kds_hashkey lo, kds_hashkey hi)
{
    SIM_ASSERT(lo <= hi);
    kds_hashkey width = hi - lo + 1; /* wraps to 0 for the whole space */
    if (width == 0)
        return 1.0;
    return ldexp((double)width, -128);
}
