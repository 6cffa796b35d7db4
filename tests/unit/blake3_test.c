/* Unit, vector and differential tests for src/core/blake3.c (BLAKE3 hash mode).
**  - vectors: the official test_vectors.json inputs (byte i = i % 251) for every published
**    length; 32-byte digests and 131 bytes of extended output, produced with `b3sum` 1.2.0
**    (`head -c LEN | b3sum --no-names [--length 131]`) and matching the published vectors
**    (empty, "abc", length 1).
**  - every implementation the CPU has (portable, SSE4.1, AVX2, AVX-512) through
**    pch_blake3__init_impl, one-shot and with random streaming splits.
**  - differential: random inputs from 0 bytes to several MiB, around chunk and power-of-two
**    chunk-count boundaries, hashed by `b3sum` in one run; fails (never skips) without it.
** PCH_BLAKE3_SEED=<n> changes the random seed (printed on failure). */
#include "harness.h"

#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

#include "core/core.h"

typedef struct vector {
    size_t len;
    const char *hash;     /* 32-byte digest, hex */
    const char *xof131;   /* first 131 bytes of extended output, hex */
} vector;

static const vector VECTORS[] = {
    {0,
     "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
     "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262e00f03e7b69af26b7faaf09fcd333050338ddfe085b8cc869ca98b206c08243a26f5"
     "487789e8f660afe6c99ef9e0c52b92e7393024a80459cf91f476f9ffdbda7001c22e159b402631f277ca96f2defdf1078282314e763699a31c5363165421cce14d"},
    {1,
     "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213",
     "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213c3a6cb8bf623e20cdb535f8d1a5ffb86342d9c0b64aca3bce1d31f60adfa137b358a"
     "d4d79f97b47c3d5e79f179df87a3b9776ef8325f8329886ba42f07fb138bb502f4081cbcec3195c5871e6c23e2cc97d3c69a613eba131e5f1351f3f1da786545e5"},
    {1023,
     "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11",
     "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11a182d27a591b05592b15607500e1e8dd56bc6c7fc063715b7a1d737df5bad3339c56"
     "778957d870eb9717b57ea3d9fb68d1b55127bba6a906a4a24bbd5acb2d123a37b28f9e9a81bbaae360d58f85e5fc9d75f7c370a0cc09b6522d9c8d822f2f28f485"},
    {1024,
     "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7",
     "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af71cf8107265ecdaf8505b95d8fcec83a98a6a96ea5109d2c179c47a387ffbb404756f"
     "6eeae7883b446b70ebb144527c2075ab8ab204c0086bb22b7c93d465efc57f8d917f0b385c6df265e77003b85102967486ed57db5c5ca170ba441427ed9afa684e"},
    {1025,
     "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444",
     "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444f4c4a22b4b399155358a994e52bf255de60035742ec71bd08ac275a1b51cc6bfe332"
     "b0ef84b409108cda080e6269ed4b3e2c3f7d722aa4cdc98d16deb554e5627be8f955c98e1d5f9565a9194cad0c4285f93700062d9595adb992ae68ff12800ab67a"},
    {2048,
     "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a",
     "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a9a60bf80001410ec9eea6698cd537939fad4749edd484cb541aced55cd9bf54764d0"
     "63f23f6f1e32e12958ba5cfeb1bf618ad094266d4fc3c968c2088f677454c288c67ba0dba337b9d91c7e1ba586dc9a5bc2d5e90c14f53a8863ac75655461cea8f9"},
    {2049,
     "5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030",
     "5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b687952256303096de31d71d74103403822a2e0bc1eb193e7aecc9643a76b7bbc0c9f9c52e8783aae9"
     "8764ca468962b5c2ec92f0c74eb5448d519713e09413719431c802f948dd5d90425a4ecdadece9eb178d80f26efccae630734dff63340285adec2aed3b51073ad3"},
    {3072,
     "b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2",
     "b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd29a3f6b0b978d6608335c09dc94ccf682f9951cdfc501bfe47b9c9189a6fc7b404d12"
     "0258506341a6d802857322fbd20d3e5dae05b95c88793fa83db1cb08e7d8008d1599b6209d78336e24839724c191b2a52a80448306e0daa84a3fdb566661a37e11"},
    {3073,
     "7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd3",
     "7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd39a27ae3b79d68d89da9bf25bc27139ae65a324918a5f9b7828181e52cf373c84f35b"
     "639b7fccbb985b6f2fa56aea0c18f531203497b8bbd3a07ceb5926f1cab74d14bd66486d9a91eba99059a98bd1cd25876b2af5a76c3e9eed554ed72ea952b603bf"},
    {4096,
     "015094013f57a5277b59d8475c0501042c0b642e531b0a1c8f58d2163229e969",
     "015094013f57a5277b59d8475c0501042c0b642e531b0a1c8f58d2163229e9690289e9409ddb1b99768eafe1623da896faf7e1114bebeadc1be30829b6f8af707d85"
     "c298f4f0ff4d9438aef948335612ae921e76d411c3a9111df62d27eaf871959ae0062b5492a0feb98ef3ed4af277f5395172dbe5c311918ea0074ce0036454f620"},
    {4097,
     "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995",
     "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb99505f91b0b5600a11251652eacfa9497b31cd3c409ce2e45cfe6c0a016967316c426bd"
     "26f619eab5d70af9a418b845c608840390f361630bd497b1ab44019316357c61dbe091ce72fc16dc340ac3d6e009e050b3adac4b5b2c92e722cffdc46501531956"},
    {5120,
     "9cadc15fed8b5d854562b26a9536d9707cadeda9b143978f319ab34230535833",
     "9cadc15fed8b5d854562b26a9536d9707cadeda9b143978f319ab34230535833acc61c8fdc114a2010ce8038c853e121e1544985133fccdd0a2d507e8e615e611e9a"
     "0ba4f47915f49e53d721816a9198e8b30f12d20ec3689989175f1bf7a300eee0d9321fad8da232ece6efb8e9fd81b42ad161f6b9550a069e66b11b40487a5f5059"},
    {5121,
     "628bd2cb2004694adaab7bbd778a25df25c47b9d4155a55f8fbd79f2fe154cff",
     "628bd2cb2004694adaab7bbd778a25df25c47b9d4155a55f8fbd79f2fe154cff96adaab0613a6146cdaabe498c3a94e529d3fc1da2bd08edf54ed64d40dcd6777647"
     "eac51d8277d70219a9694334a68bc8f0f23e20b0ff70ada6f844542dfa32cd4204ca1846ef76d811cdb296f65e260227f477aa7aa008bac878f72257484f2b6c95"},
    {6144,
     "3e2e5b74e048f3add6d21faab3f83aa44d3b2278afb83b80b3c35164ebeca205",
     "3e2e5b74e048f3add6d21faab3f83aa44d3b2278afb83b80b3c35164ebeca2054d742022da6fdda444ebc384b04a54c3ac5839b49da7d39f6d8a9db03deab32aade1"
     "56c1c0311e9b3435cde0ddba0dce7b26a376cad121294b689193508dd63151603c6ddb866ad16c2ee41585d1633a2cea093bea714f4c5d6b903522045b20395c83"},
    {6145,
     "f1323a8631446cc50536a9f705ee5cb619424d46887f3c376c695b70e0f0507f",
     "f1323a8631446cc50536a9f705ee5cb619424d46887f3c376c695b70e0f0507f18a2cfdd73c6e39dd75ce7c1c6e3ef238fd54465f053b25d21044ccb2093beb01501"
     "5532b108313b5829c3621ce324b8e14229091b7c93f32db2e4e63126a377d2a63a3597997d4f1cba59309cb4af240ba70cebff9a23d5e3ff0cdae2cfd54e070022"},
    {7168,
     "61da957ec2499a95d6b8023e2b0e604ec7f6b50e80a9678b89d2628e99ada77a",
     "61da957ec2499a95d6b8023e2b0e604ec7f6b50e80a9678b89d2628e99ada77a5707c321c83361793b9af62a40f43b523df1c8633cecb4cd14d00bdc79c78fca5165"
     "b863893f6d38b02ff7236c5a9a8ad2dba87d24c547cab046c29fc5bc1ed142e1de4763613bb162a5a538e6ef05ed05199d751f9eb58d332791b8d73fb74e4fce95"},
    {7169,
     "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817",
     "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e781798a8b20534be1ca9eb2ae2df3fae2ea60e48c6fb0b850b1385b5de0fe460dbe9d9f9"
     "b0d8db4435da75c601156df9d047f4ede008732eb17adc05d96180f8a73548522840779e6062d643b79478a6e8dbce68927f36ebf676ffa7d72d5f68f050b119c8"},
    {8192,
     "aae792484c8efe4f19e2ca7d371d8c467ffb10748d8a5a1ae579948f718a2a63",
     "aae792484c8efe4f19e2ca7d371d8c467ffb10748d8a5a1ae579948f718a2a635fe51a27db045a567c1ad51be5aa34c01c6651c4d9b5b5ac5d0fd58cf18dd61a4777"
     "8566b797a8c67df7b1d60b97b19288d2d877bb2df417ace009dcb0241ca1257d62712b6a4043b4ff33f690d849da91ea3bf711ed583cb7b7a7da2839ba71309bbf"},
    {8193,
     "bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3b",
     "bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3bb2282aa69be089359ea1154b9a9286c4a56af4de975a9aa4a5c497654914d279bea6"
     "0bb6d2cf7225a2fa0ff5ef56bbe4b149f3ed15860f78b4e2ad04e158e375c1e0c0b551cd7dfc82f1b155c11b6b3ed51ec9edb30d133653bb5709d1dbd55f4e1ff6"},
    {16384,
     "f875d6646de28985646f34ee13be9a576fd515f76b5b0a26bb324735041ddde4",
     "f875d6646de28985646f34ee13be9a576fd515f76b5b0a26bb324735041ddde49d764c270176e53e97bdffa58d549073f2c660be0e81293767ed4e4929f9ad34bbb3"
     "9a529334c57c4a381ffd2a6d4bfdbf1482651b172aa883cc13408fa67758a3e47503f93f87720a3177325f7823251b85275f64636a8f1d599c2e49722f42e93893"},
    {31744,
     "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47",
     "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47860cc51f2b0c28a7b77304bd55fe73af663c02d3f52ea053ba43431ca5bab7bfea2f"
     "5e9d7121770d88f70ae9649ea713087d1914f7f312147e247f87eb2d4ffef0ac978bf7b6579d57d533355aa20b8b77b13fd09748728a5cc327a8ec470f4013226f"},
    {102400,
     "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085",
     "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085e01c59dab908c04c3342b816941a26d69c2605ebee5ec5291cc55e15b76146e6745f"
     "0601156c3596cb75065a9c57f35585a52e1ac70f69131c23d611ce11ee4ab1ec2c009012d236648e77be9295dd0426f29b764d65de58eb7d01dd42248204f45f8e"},
};

#define N_VECTORS (sizeof VECTORS / sizeof VECTORS[0])
#define XOF_LEN 131

static const vector *find_vector(size_t len)
{
    for (size_t i = 0; i < N_VECTORS; i++) if (VECTORS[i].len == len) return &VECTORS[i];
    abort();
}

static uint64_t g_seed = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(uint64_t *s)   /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rng_below(uint64_t *s, size_t n) { return n ? (size_t)(rng_next(s) % n) : 0; }

static void fill_random(uint8_t *p, size_t n, uint64_t *s)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = rng_next(s);
        size_t k = n - i < 8 ? n - i : 8;
        memcpy(p + i, &v, k);
    }
}

static uint8_t *pattern_251(size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    if (!p) abort();
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(i % 251);
    return p;
}

static void to_hex(char *out, const uint8_t *in, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

/* The implementations this CPU can run: those pch_blake3__init_impl does not downgrade. */
static int best_impl(void)
{
    pch_blake3 h;
    return pch_blake3__init_impl(&h, PCH_BLAKE3_IMPL_AVX512);
}

/* Hash data with impl, in updates of random sizes (some empty, some tiny, some around a
** block or chunk, some huge). */
static void hash_split(int impl, const uint8_t *data, size_t len, uint64_t *rng,
                       uint8_t *out, size_t out_len)
{
    pch_blake3 h;
    size_t off = 0;
    pch_blake3__init_impl(&h, impl);
    while (off < len) {
        size_t left = len - off, n;
        switch (rng_below(rng, 6)) {
        case 0: n = rng_below(rng, 4); break;
        case 1: n = 63 + rng_below(rng, 3); break;
        case 2: n = 1023 + rng_below(rng, 3); break;
        case 3: n = rng_below(rng, 5000); break;
        case 4: n = 1024 * (1 + rng_below(rng, 40)); break;
        default: n = rng_below(rng, left + 1); break;
        }
        if (n > left) n = left;
        pch_blake3_update(&h, data + off, n);
        off += n;
    }
    pch_blake3_final(&h, out, out_len);
}

static void hash_oneshot(int impl, const uint8_t *data, size_t len, uint8_t *out, size_t out_len)
{
    pch_blake3 h;
    pch_blake3__init_impl(&h, impl);
    pch_blake3_update(&h, data, len);
    pch_blake3_final(&h, out, out_len);
}

static void test_blake3__published(void)
{
    char hex[65];
    pch_blake3_hex(hex, "", 0);
    PCH_CHECK_EQ_STR(hex, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
    pch_blake3_hex(hex, "abc", 3);
    PCH_CHECK_EQ_STR(hex, "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85");
    uint8_t d[32];
    pch_blake3_hash(d, "abc", 3);
    to_hex(hex, d, 32);
    PCH_CHECK_EQ_STR(hex, "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85");
}

static void test_blake3__vectors(void)
{
    uint8_t *input = pattern_251(102400);
    uint8_t out[XOF_LEN];
    char hex[2 * XOF_LEN + 1];
    uint64_t rng = g_seed;
    int failed = 0;
    for (int impl = 0; impl <= best_impl() && !failed; impl++) {
        for (size_t v = 0; v < N_VECTORS && !failed; v++) {
            const vector *t = &VECTORS[v];
            hash_oneshot(impl, input, t->len, out, 32);
            to_hex(hex, out, 32);
            if (strcmp(hex, t->hash) != 0) {
                fprintf(stderr, "  %s len %zu: one-shot %s\n", pch_blake3__impl_name(impl), t->len, hex);
                failed = 1;
            }
            hash_oneshot(impl, input, t->len, out, XOF_LEN);
            to_hex(hex, out, XOF_LEN);
            if (strcmp(hex, t->xof131) != 0) {
                fprintf(stderr, "  %s len %zu: xof %s\n", pch_blake3__impl_name(impl), t->len, hex);
                failed = 1;
            }
            for (int rep = 0; rep < 3; rep++) {
                hash_split(impl, input, t->len, &rng, out, XOF_LEN);
                to_hex(hex, out, XOF_LEN);
                if (strcmp(hex, t->xof131) != 0) {
                    fprintf(stderr, "  %s len %zu: split xof %s\n", pch_blake3__impl_name(impl), t->len, hex);
                    failed = 1;
                }
            }
            /* One byte at a time: every block stays in the chunk buffer. */
            if (t->len <= 8193) {
                pch_blake3 h;
                pch_blake3__init_impl(&h, impl);
                for (size_t i = 0; i < t->len; i++) pch_blake3_update(&h, input + i, 1);
                pch_blake3_final(&h, out, 32);
                to_hex(hex, out, 32);
                if (strcmp(hex, t->hash) != 0) {
                    fprintf(stderr, "  %s len %zu: bytewise %s\n", pch_blake3__impl_name(impl), t->len, hex);
                    failed = 1;
                }
            }
        }
    }
    free(input);
    PCH_CHECK(!failed);
}

/* final does not change the hasher: calling it twice, or continuing afterwards, works; shorter
** outputs are prefixes of longer ones. */
static void test_blake3__final_const_and_prefix(void)
{
    uint8_t *input = pattern_251(8193);
    uint8_t a[XOF_LEN], b[XOF_LEN], c[XOF_LEN];
    char hex[2 * XOF_LEN + 1];
    pch_blake3 h;
    pch_blake3_init(&h);
    pch_blake3_update(&h, input, 4096);
    pch_blake3_final(&h, a, 32);
    to_hex(hex, a, 32);
    PCH_CHECK_EQ_STR(hex, find_vector(4096)->hash);
    pch_blake3_final(&h, b, 32);
    PCH_CHECK(memcmp(a, b, 32) == 0);
    pch_blake3_update(&h, input + 4096, 8193 - 4096);
    pch_blake3_final(&h, c, XOF_LEN);
    to_hex(hex, c, XOF_LEN);
    PCH_CHECK_EQ_STR(hex, find_vector(8193)->xof131);
    for (size_t n = 0; n <= XOF_LEN; n++) {
        memset(b, 0xAA, sizeof b);
        pch_blake3_final(&h, b, n);
        PCH_CHECK(memcmp(b, c, n) == 0);
        for (size_t i = n; i < XOF_LEN; i++) PCH_CHECK(b[i] == 0xAA);
    }
    free(input);
}

/* The SIMD kernels against the portable path on random data of awkward sizes. */
static void test_blake3__impls_agree(void)
{
    const size_t max = (3u << 20) + 12345;
    uint8_t *data = malloc(max);
    uint8_t ref[64], got[64];
    uint64_t rng = g_seed ^ 0x1234;
    PCH_CHECK(data != NULL);
    fill_random(data, max, &rng);
    static const size_t sizes[] = {
        0, 1, 64, 65, 1024, 1025, 2 * 1024 + 1, 5 * 1024, 9 * 1024 + 7, 17 * 1024 + 1,
        31 * 1024, 32 * 1024 + 1, 33 * 1024, 65 * 1024 - 1, 100000, 1u << 20, (3u << 20) + 12345
    };
    int failed = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t off = rng_below(&rng, 64);   /* unaligned input too */
        const size_t n = sizes[s] > max - off ? max - off : sizes[s];
        hash_oneshot(PCH_BLAKE3_IMPL_PORTABLE, data + off, n, ref, sizeof ref);
        for (int impl = 0; impl <= best_impl(); impl++) {
            hash_split(impl, data + off, n, &rng, got, sizeof got);
            if (memcmp(ref, got, sizeof ref) != 0) {
                fprintf(stderr, "  %s differs from portable at len %zu (seed %" PRIu64 ")\n",
                        pch_blake3__impl_name(impl), n, g_seed);
                failed = 1;
            }
        }
    }
    free(data);
    PCH_CHECK(!failed);
}

/* ---- differential against b3sum ---- */

typedef struct diff_file {
    char path[512];
    size_t len;
    char b3sum_hex[2 * XOF_LEN + 1];
} diff_file;

static bool b3sum_available(void)
{
    char line[128] = "";
    FILE *p = popen("b3sum --version 2>&1", "r");
    if (!p) return false;
    bool ok = fgets(line, sizeof line, p) != NULL && strncmp(line, "b3sum ", 6) == 0;
    return pclose(p) == 0 && ok;
}

/* Run `b3sum [--length L] f1 f2 ...` once and store each file's hex output. */
static bool run_b3sum(diff_file *files, size_t n, size_t out_len)
{
    size_t cap = 64 + n * (sizeof files[0].path + 4);
    char *cmd = malloc(cap);
    bool ok = true;
    if (!cmd) return false;
    int w = snprintf(cmd, cap, "b3sum --length %zu --", out_len);
    for (size_t i = 0; i < n; i++)
        w += snprintf(cmd + w, cap - (size_t)w, " '%s'", files[i].path);
    FILE *p = popen(cmd, "r");
    free(cmd);
    if (!p) return false;
    char *line = malloc(4096);
    size_t got = 0;
    while (line && fgets(line, 4096, p)) {
        char *sp = strstr(line, "  ");
        if (!sp) { ok = false; break; }
        *sp = '\0';
        char *name = sp + 2;
        name[strcspn(name, "\n")] = '\0';
        for (size_t i = 0; i < n; i++) {
            if (strcmp(files[i].path, name) == 0 && strlen(line) == 2 * out_len) {
                snprintf(files[i].b3sum_hex, sizeof files[i].b3sum_hex, "%s", line);
                got++;
            }
        }
    }
    free(line);
    if (pclose(p) != 0) ok = false;
    return ok && got == n;
}

static void test_blake3__differential_b3sum(void)
{
    PCH_CHECK_MSG(b3sum_available(), "b3sum not found: install the Debian package b3sum "
                  "(scripts/bootstrap.sh does); the differential test cannot run");
    const size_t K = 1024, M = 1024 * 1024;
    size_t sizes[] = {
        0, 1, 63, 64, 65, 1023, K, K + 1, 2 * K - 1, 2 * K, 2 * K + 1, 3 * K + 63,
        8 * K, 16 * K - 1, 16 * K, 16 * K + 1, 32 * K - 1, 32 * K, 32 * K + 1, 33 * K + 1,
        64 * K + 1, 128 * K - 1, 257 * K, M - 1, M, M + 1, 2 * M + K + 1, 4 * M - 1, 4 * M + 1,
        0, 0, 0, 0, 0   /* random, filled below */
    };
    const size_t n_files = sizeof sizes / sizeof sizes[0];
    uint64_t rng = g_seed ^ 0xd1ff;
    for (size_t i = n_files - 5; i < n_files; i++) sizes[i] = rng_below(&rng, 6 * M);

    const char *tmp = getenv("TMPDIR");
    char dir[256];
    snprintf(dir, sizeof dir, "%s/pch-blake3-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    PCH_CHECK_MSG(mkdtemp(dir) != NULL, "mkdtemp %s: %s", dir, strerror(errno));

    diff_file *files = calloc(n_files, sizeof *files);
    uint8_t *data = malloc(6 * M + 1);
    uint8_t out[XOF_LEN];
    char hex[2 * XOF_LEN + 1];
    int failed = 0;
    if (!files || !data) { failed = 1; goto done; }
    for (size_t i = 0; i < n_files; i++) {
        files[i].len = sizes[i];
        snprintf(files[i].path, sizeof files[i].path, "%s/in-%02zu.bin", dir, i);
        fill_random(data, sizes[i], &rng);
        FILE *f = fopen(files[i].path, "wb");
        if (!f || fwrite(data, 1, sizes[i], f) != sizes[i] || fclose(f) != 0) {
            fprintf(stderr, "  cannot write %s\n", files[i].path);
            failed = 1;
            goto done;
        }
    }
    for (int pass = 0; pass < 2 && !failed; pass++) {
        const size_t out_len = pass == 0 ? 32 : XOF_LEN;
        if (!run_b3sum(files, n_files, out_len)) {
            fprintf(stderr, "  b3sum run failed or printed unexpected output\n");
            failed = 1;
            break;
        }
        for (size_t i = 0; i < n_files; i++) {
            FILE *f = fopen(files[i].path, "rb");
            if (!f || fread(data, 1, files[i].len, f) != files[i].len) {
                if (f) fclose(f);
                failed = 1;
                break;
            }
            fclose(f);
            for (int impl = 0; impl <= best_impl(); impl++) {
                if (pass == 1 && impl != best_impl()) continue;
                hash_split(impl, data, files[i].len, &rng, out, out_len);
                to_hex(hex, out, out_len);
                if (strcmp(hex, files[i].b3sum_hex) != 0) {
                    fprintf(stderr, "  %s len %zu out %zu (seed %" PRIu64 "): ours %s b3sum %s\n",
                            pch_blake3__impl_name(impl), files[i].len, out_len, g_seed, hex,
                            files[i].b3sum_hex);
                    failed = 1;
                }
            }
        }
    }
    if (!failed) {
        size_t total = 0;
        for (size_t i = 0; i < n_files; i++) total += files[i].len;
        fprintf(stderr, "blake3: %zu files, %zu bytes agree with b3sum\n", n_files, total);
    }
done:
    if (files)
        for (size_t i = 0; i < n_files; i++) if (files[i].path[0]) unlink(files[i].path);
    rmdir(dir);
    free(files);
    free(data);
    PCH_CHECK(!failed);
}

int main(int argc, char **argv)
{
    const char *seed = getenv("PCH_BLAKE3_SEED");
    if (seed && *seed) g_seed = strtoull(seed, NULL, 0);
    pch_test_init(argc, argv, "blake3_test");
    fprintf(stderr, "blake3: best implementation %s\n", pch_blake3__impl_name(best_impl()));
    PCH_RUN(test_blake3__published);
    PCH_RUN(test_blake3__vectors);
    PCH_RUN(test_blake3__final_const_and_prefix);
    PCH_RUN(test_blake3__impls_agree);
    PCH_RUN(test_blake3__differential_b3sum);
    return pch_test_report();
}
