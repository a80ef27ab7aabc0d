/* kds_hashkey.h - Kinesis hash keys: 128-bit unsigned integers with decimal I/O.
 *
 * A record's hash key is the MD5 digest of its partition key's UTF-8 bytes read as a
 * big-endian unsigned 128-bit integer (model.md section 1), or an ExplicitHashKey given
 * in decimal. CreateStream splits [0, 2^128 - 1] evenly: shard i of N starts at
 * i * floor(2^128 / N) and the last shard ends at 2^128 - 1. Neither printf nor strtoull
 * handles 128 bits, so this module owns the decimal and hex conversions.
 */
#ifndef KDS_HASHKEY_H
#define KDS_HASHKEY_H

#include <stddef.h>
#include <stdint.h>

__extension__ typedef unsigned __int128 kds_hashkey;

#define KDS_HASHKEY_MAX (~(kds_hashkey)0)
#define KDS_HASHKEY_DEC_LEN 40 /* 39 digits of 2^128 - 1 plus NUL */
#define KDS_HASHKEY_HEX_LEN 33 /* 32 hex digits plus NUL */

/* The hash key of a partition key of `len` bytes: MD5, big-endian. */
kds_hashkey kds_hashkey_from_md5(const void *key, size_t len);

/* Parse a decimal ExplicitHashKey ("0" .. "340282366920938463463374607431768211455").
 * Returns 0, SIM_ESYNTAX (empty, sign, or a non-digit) or SIM_ERANGE (>= 2^128). */
int kds_hashkey_parse_dec(const char *text, kds_hashkey *out);

/* Write the decimal form into buf (KDS_HASHKEY_DEC_LEN bytes). Returns buf. */
char *kds_hashkey_to_dec(char buf[KDS_HASHKEY_DEC_LEN], kds_hashkey k);

/* Write 32 lower-case hex digits into buf (KDS_HASHKEY_HEX_LEN bytes). Returns buf. */
char *kds_hashkey_to_hex(char buf[KDS_HASHKEY_HEX_LEN], kds_hashkey k);

/* Starting hash key of shard i (0-based) when CreateStream makes n >= 1 shards:
 * i * floor(2^128 / n). */
kds_hashkey kds_hashkey_even_start(uint32_t i, uint32_t n);

/* Ending hash key of shard i of n: the next shard's start - 1, or 2^128 - 1 for the
 * last shard. */
kds_hashkey kds_hashkey_even_end(uint32_t i, uint32_t n);

/* The fraction of the key space [lo, hi] covers, as a double in (0, 1]. */
double kds_hashkey_share(kds_hashkey lo, kds_hashkey hi);

#endif
