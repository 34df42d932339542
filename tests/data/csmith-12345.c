/*
 * This is a RANDOMLY GENERATED PROGRAM.
 *
 * Generator: csmith 2.3.0
 * Git version: 30dccd7
 * Options:   --seed 12345
 * Seed:      12345
 */

#include "csmith.h"


static long __undefined;

/* --- Struct/Union Declarations --- */
union U0 {
   volatile int16_t  f0;
   int8_t  f1;
   volatile uint32_t  f2;
   int8_t * f3;
   unsigned f4 : 29;
};

/* --- GLOBAL VARIABLES --- */
static volatile int32_t g_2[6][2] = {{0L,0L},{0L,0L},{0L,0L},{0L,0L},{0L,0L},{0L,0L}};
static int32_t g_3[9][7] = {{0xA07E4FC2L,6L,6L,0xA07E4FC2L,8L,0x9EE1C974L,0x9EE1C974L},{(-6L),0x2DF3D37AL,0xE30F5872L,0x2DF3D37AL,(-6L),0x2DF3D37AL,0xE30F5872L},{8L,0xA07E4FC2L,6L,6L,0xA07E4FC2L,8L,0x9EE1C974L},{0x9CDC345FL,0xCF2E5664L,0x9CDC345FL,0x2DF3D37AL,0x9CDC345FL,0xCF2E5664L,0x9CDC345FL},{8L,6L,0x9EE1C974L,0xA07E4FC2L,0xA07E4FC2L,0x9EE1C974L,6L},{(-6L),0xCF2E5664L,0xE30F5872L,0xCF2E5664L,(-6L),0xCF2E5664L,0xE30F5872L},{0xA07E4FC2L,0xA07E4FC2L,0x9EE1C974L,6L,8L,8L,6L},{0x9CDC345FL,0x2DF3D37AL,0x9CDC345FL,0xCF2E5664L,0x9CDC345FL,0x2DF3D37AL,0x9CDC345FL},{0xA07E4FC2L,6L,6L,0xA07E4FC2L,8L,0x9EE1C974L,0x9EE1C974L}};
static uint64_t g_12[6][2][7] = {{{18446744073709551611UL,9UL,18446744073709551611UL,9UL,18446744073709551611UL,9UL,18446744073709551611UL},{1UL,1UL,0x7CCCAEA0A9F4F9A0LL,0x7CCCAEA0A9F4F9A0LL,1UL,1UL,0x7CCCAEA0A9F4F9A0LL}},{{0xE9F9034E1054D814LL,9UL,0xE9F9034E1054D814LL,9UL,0xE9F9034E1054D814LL,9UL,0xE9F9034E1054D814LL},{1UL,0x7CCCAEA0A9F4F9A0LL,0x7CCCAEA0A9F4F9A0LL,1UL,1UL,0x7CCCAEA0A9F4F9A0LL,0x7CCCAEA0A9F4F9A0LL}},{{18446744073709551611UL,9UL,18446744073709551611UL,9UL,18446744073709551611UL,9UL,18446744073709551611UL},{1UL,1UL,0x7CCCAEA0A9F4F9A0LL,0x7CCCAEA0A9F4F9A0LL,1UL,1UL,0x7CCCAEA0A9F4F9A0LL}},{{0xE9F9034E1054D814LL,9UL,0xE9F9034E1054D814LL,9UL,0xE9F9034E1054D814LL,9UL,0xE9F9034E1054D814LL},{1UL,0x7CCCAEA0A9F4F9A0LL,0x7CCCAEA0A9F4F9A0LL,1UL,1UL,0x7CCCAEA0A9F4F9A0LL,0x7CCCAEA0A9F4F9A0LL}},{{18446744073709551611UL,9UL,18446744073709551611UL,9UL,18446744073709551611UL,9UL,18446744073709551611UL},{1UL,1UL,0x7CCCAEA0A9F4F9A0LL,0x7CCCAEA0A9F4F9A0LL,1UL,1UL,0x7CCCAEA0A9F4F9A0LL}},{{0xE9F9034E1054D814LL,9UL,0xE9F9034E1054D814LL,9UL,0xE9F9034E1054D814LL,9UL,0xE9F9034E1054D814LL},{1UL,0x7CCCAEA0A9F4F9A0LL,0x7CCCAEA0A9F4F9A0LL,1UL,1UL,0x7CCCAEA0A9F4F9A0LL,0x7CCCAEA0A9F4F9A0LL}}};
static uint64_t g_21 = 0x015E0C0A1033631ALL;
static int8_t g_25 = 0x6DL;
static int8_t g_43[4][10] = {{0x39L,(-8L),8L,5L,(-4L),5L,8L,(-8L),0x39L,0xC0L},{(-4L),5L,3L,0xE2L,0xECL,0x39L,0xDCL,0xC0L,8L,8L},{3L,0x56L,8L,0xE2L,0xE2L,8L,0x56L,3L,0x39L,1L},{0x56L,0xC0L,9L,5L,0x6AL,8L,0L,0xE2L,0x93L,0xE2L}};
static int64_t g_46 = (-1L);
static int32_t g_49 = (-5L);
static int32_t * volatile g_48 = &g_49;/* VOLATILE GLOBAL g_48 */
static uint32_t g_116 = 0xAC20F127L;
static int8_t *g_124[3] = {&g_43[0][3],&g_43[0][3],&g_43[0][3]};
static int8_t **g_123 = &g_124[2];
static int16_t g_134 = 4L;
static int32_t *g_140 = &g_49;
static int32_t ** volatile g_139 = &g_140;/* VOLATILE GLOBAL g_139 */
static uint8_t g_164 = 0xC4L;
static uint16_t g_170 = 65530UL;
static int16_t g_173 = 0x70C8L;
static int32_t ** volatile g_176 = &g_140;/* VOLATILE GLOBAL g_176 */
static uint16_t g_213 = 65535UL;
static int32_t ** volatile g_217 = &g_140;/* VOLATILE GLOBAL g_217 */
static volatile int64_t g_220 = (-1L);/* VOLATILE GLOBAL g_220 */
static const volatile int64_t *g_219 = &g_220;
static const volatile int64_t * volatile *g_218 = &g_219;
static uint32_t *g_226 = (void*)0;
static const int8_t g_234 = (-1L);
static uint32_t g_238 = 3UL;
static int32_t g_250[3][10] = {{0L,0L,(-9L),0L,0L,(-9L),0L,0L,(-9L),0L},{0L,(-5L),(-5L),0L,(-5L),(-5L),0L,(-5L),(-5L),0L},{(-5L),0L,(-5L),(-5L),0L,(-5L),(-5L),0L,(-5L),(-5L)}};
static uint64_t g_281[6][9] = {{0xD032AA6A7B5881AELL,1UL,1UL,0xD032AA6A7B5881AELL,1UL,0xFBAE6BA0D8F51295LL,0xD032AA6A7B5881AELL,0xD032AA6A7B5881AELL,0xFBAE6BA0D8F51295LL},{1UL,0xD032AA6A7B5881AELL,1UL,0xD032AA6A7B5881AELL,1UL,1UL,0xD032AA6A7B5881AELL,1UL,0xD032AA6A7B5881AELL},{0xD032AA6A7B5881AELL,0x9F524A4F3CDA21B0LL,1UL,1UL,0x9F524A4F3CDA21B0LL,0xD032AA6A7B5881AELL,0x9F524A4F3CDA21B0LL,1UL,1UL},{1UL,1UL,0xD032AA6A7B5881AELL,1UL,0xD032AA6A7B5881AELL,1UL,1UL,0xD032AA6A7B5881AELL,1UL},{0xFBAE6BA0D8F51295LL,0x9F524A4F3CDA21B0LL,0xFBAE6BA0D8F51295LL,0xD032AA6A7B5881AELL,0xD032AA6A7B5881AELL,0xFBAE6BA0D8F51295LL,0x9F524A4F3CDA21B0LL,0xFBAE6BA0D8F51295LL,0xD032AA6A7B5881AELL},{0xFBAE6BA0D8F51295LL,0xD032AA6A7B5881AELL,0xD032AA6A7B5881AELL,0xFBAE6BA0D8F51295LL,0x9F524A4F3CDA21B0LL,0xFBAE6BA0D8F51295LL,0xD032AA6A7B5881AELL,0xD032AA6A7B5881AELL,0xFBAE6BA0D8F51295LL}};
static uint64_t g_288 = 0x17573BEA549995AELL;
static volatile int64_t * volatile g_319 = (void*)0;/* VOLATILE GLOBAL g_319 */
static volatile int64_t * volatile * volatile g_318[7][2][9] = {{{(void*)0,&g_319,&g_319,&g_319,(void*)0,&g_319,&g_319,&g_319,&g_319},{&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319}},{{(void*)0,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,(void*)0,&g_319},{(void*)0,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319}},{{&g_319,&g_319,&g_319,&g_319,(void*)0,(void*)0,&g_319,&g_319,&g_319},{&g_319,&g_319,&g_319,&g_319,(void*)0,&g_319,&g_319,&g_319,&g_319}},{{&g_319,&g_319,&g_319,(void*)0,(void*)0,&g_319,&g_319,&g_319,&g_319},{&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,(void*)0}},{{&g_319,(void*)0,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,(void*)0},{&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319}},{{&g_319,&g_319,&g_319,&g_319,(void*)0,&g_319,&g_319,&g_319,(void*)0},{(void*)0,&g_319,&g_319,&g_319,(void*)0,&g_319,(void*)0,&g_319,&g_319}},{{(void*)0,(void*)0,&g_319,&g_319,&g_319,(void*)0,&g_319,&g_319,(void*)0},{&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319,&g_319}}};
static volatile int64_t * volatile * volatile *g_317[10] = {&g_318[3][0][5],&g_318[3][0][5],&g_318[3][0][5],&g_318[3][0][5],&g_318[3][0][5],&g_318[3][0][5],&g_318[3][0][5],&g_318[3][0][5],&g_318[3][0][5],&g_318[3][0][5]};
static volatile int64_t * volatile * volatile ** volatile g_316 = &g_317[5];/* VOLATILE GLOBAL g_316 */
static int32_t ** volatile g_326 = &g_140;/* VOLATILE GLOBAL g_326 */
static int16_t g_338 = (-1L);
static volatile uint8_t g_368 = 0x43L;/* VOLATILE GLOBAL g_368 */
static volatile uint8_t *g_367 = &g_368;
static volatile uint8_t ** volatile g_366 = &g_367;/* VOLATILE GLOBAL g_366 */
static const volatile union U0 g_390 = {0x4507L};/* VOLATILE GLOBAL g_390 */
static uint16_t g_401 = 1UL;
static uint8_t g_455 = 251UL;
static const int64_t g_460 = 0x812E066221197C76LL;
static int32_t *g_518[9][3][3] = {{{&g_49,&g_250[2][4],(void*)0},{&g_250[2][8],&g_3[0][4],&g_250[2][8]},{&g_3[2][3],&g_3[8][4],&g_250[2][8]}},{{&g_3[2][3],&g_3[6][3],&g_250[2][6]},{&g_250[0][0],&g_250[0][0],&g_250[2][8]},{&g_250[2][6],&g_49,&g_250[1][8]}},{{(void*)0,&g_49,&g_49},{&g_3[6][3],&g_49,&g_250[2][4]},{&g_250[2][8],(void*)0,&g_49}},{{&g_3[3][1],(void*)0,&g_250[1][8]},{&g_250[1][8],(void*)0,&g_250[2][8]},{&g_49,&g_250[1][8],&g_250[2][6]}},{{&g_3[0][4],(void*)0,&g_250[2][8]},{&g_49,(void*)0,&g_250[2][8]},{&g_49,&g_250[1][8],&g_49}},{{(void*)0,(void*)0,(void*)0},{&g_250[2][8],(void*)0,&g_3[8][4]},{&g_49,(void*)0,&g_3[0][4]}},{{(void*)0,&g_49,&g_49},{&g_49,&g_49,&g_49},{&g_250[2][8],&g_49,(void*)0}},{{(void*)0,&g_250[0][0],&g_3[2][3]},{&g_49,&g_3[6][3],(void*)0},{&g_49,&g_3[8][4],(void*)0}},{{&g_3[0][4],&g_3[2][3],&g_3[2][3]},{&g_49,&g_49,(void*)0},{&g_250[1][8],&g_49,&g_49}}};
static int32_t ** volatile g_517 = &g_518[8][0][2];/* VOLATILE GLOBAL g_517 */
static int16_t g_588[9][1][6] = {{{1L,0xF6FCL,0x4389L,0x199CL,0x4389L,0xF6FCL}},{{0xDF46L,0xE715L,1L,(-8L),0xF6FCL,0xD45DL}},{{0x6E58L,0xC2ADL,0x199CL,1L,2L,0x4389L}},{{(-8L),0xC2ADL,0L,0xF6FCL,0xF6FCL,0L}},{{0xE715L,0xE715L,0xC2ADL,1L,0x4389L,1L}},{{0xE50AL,0xF6FCL,0x2141L,0x6E58L,(-1L),0xC2ADL}},{{2L,0xE50AL,0x2141L,1L,0xE715L,1L}},{{0xC2ADL,1L,0xC2ADL,0xD45DL,0x86C7L,0L}},{{0xD45DL,0x86C7L,0L,(-1L),0xDF46L,0x4389L}}};
static volatile union U0 g_619 = {1L};/* VOLATILE GLOBAL g_619 */
static volatile union U0 * volatile g_618[6][6] = {{(void*)0,&g_619,&g_619,(void*)0,&g_619,&g_619},{&g_619,&g_619,&g_619,&g_619,&g_619,&g_619},{&g_619,&g_619,&g_619,&g_619,&g_619,&g_619},{(void*)0,&g_619,&g_619,(void*)0,&g_619,&g_619},{&g_619,&g_619,&g_619,&g_619,&g_619,&g_619},{&g_619,&g_619,&g_619,&g_619,&g_619,&g_619}};
static volatile union U0 * volatile * const  volatile g_617 = &g_618[2][2];/* VOLATILE GLOBAL g_617 */
static const volatile uint8_t g_690 = 0xE4L;/* VOLATILE GLOBAL g_690 */
static union U0 g_711 = {-2L};/* VOLATILE GLOBAL g_711 */
static uint32_t g_729 = 1UL;
static union U0 *g_743 = &g_711;
static union U0 **g_742 = &g_743;
static union U0 ***g_741 = &g_742;
static union U0 **** const  volatile g_740 = &g_741;/* VOLATILE GLOBAL g_740 */
static union U0 g_755 = {0x7DD5L};/* VOLATILE GLOBAL g_755 */
static int8_t * volatile *g_779 = &g_124[0];
static int8_t * volatile **g_778[2][1] = {{&g_779},{&g_779}};
static int64_t g_807 = 0x75A6A40CA1637189LL;
static uint32_t **g_828 = &g_226;
static union U0 g_838 = {0xA7FAL};/* VOLATILE GLOBAL g_838 */
static int64_t g_921 = 0x1BF6F39C8BC781B7LL;
static union U0 g_931 = {0L};/* VOLATILE GLOBAL g_931 */
static volatile uint64_t g_982 = 1UL;/* VOLATILE GLOBAL g_982 */
static const union U0 g_993 = {1L};/* VOLATILE GLOBAL g_993 */
static int32_t *g_1010 = &g_49;
static int32_t g_1035 = 0xBDF1C531L;
static int16_t g_1036 = 1L;
static int32_t ** volatile g_1055 = &g_1010;/* VOLATILE GLOBAL g_1055 */
static union U0 g_1066 = {0x2DA0L};/* VOLATILE GLOBAL g_1066 */
static volatile union U0 g_1095[7][3] = {{{0x7D14L},{1L},{0x7D14L}},{{1L},{1L},{1L}},{{0x7D14L},{1L},{0x7D14L}},{{1L},{1L},{1L}},{{0x7D14L},{1L},{0x7D14L}},{{1L},{1L},{1L}},{{0x7D14L},{1L},{0x7D14L}}};
static int32_t ** volatile g_1108 = &g_518[8][0][2];/* VOLATILE GLOBAL g_1108 */
static int32_t ** volatile g_1113 = &g_140;/* VOLATILE GLOBAL g_1113 */
static volatile uint8_t g_1135 = 0UL;/* VOLATILE GLOBAL g_1135 */
static const int32_t g_1159[8] = {9L,9L,9L,9L,9L,9L,9L,9L};
static const int32_t g_1161 = 1L;
static const int32_t *g_1163[9] = {&g_250[2][8],&g_250[2][8],&g_250[2][8],&g_250[2][8],&g_250[2][8],&g_250[2][8],&g_250[2][8],&g_250[2][8],&g_250[2][8]};
static const int32_t ** const  volatile g_1162 = &g_1163[1];/* VOLATILE GLOBAL g_1162 */
static volatile uint32_t * volatile * volatile * volatile g_1180 = (void*)0;/* VOLATILE GLOBAL g_1180 */
static volatile uint32_t * volatile * volatile * volatile *g_1179 = &g_1180;
static uint32_t * const *g_1183 = &g_226;
static uint32_t * const **g_1182 = &g_1183;
static uint32_t * const ***g_1181 = &g_1182;
static int32_t ** volatile g_1211[1][8] = {{&g_518[3][0][0],&g_518[3][0][0],&g_518[3][0][0],&g_518[3][0][0],&g_518[3][0][0],&g_518[3][0][0],&g_518[3][0][0],&g_518[3][0][0]}};
static int32_t ** volatile g_1258 = (void*)0;/* VOLATILE GLOBAL g_1258 */
static volatile union U0 g_1270 = {0x77C7L};/* VOLATILE GLOBAL g_1270 */
static volatile int16_t g_1296 = 0L;/* VOLATILE GLOBAL g_1296 */
static uint16_t * const g_1317 = &g_170;
static uint16_t * const * volatile g_1316 = &g_1317;/* VOLATILE GLOBAL g_1316 */
static uint16_t **g_1318 = (void*)0;
static int64_t *g_1362 = (void*)0;
static int64_t **g_1361 = &g_1362;
static int64_t ***g_1360 = &g_1361;
static union U0 g_1404 = {9L};/* VOLATILE GLOBAL g_1404 */
static int32_t ** const  volatile g_1431[1] = {(void*)0};
static union U0 g_1520 = {0xE736L};/* VOLATILE GLOBAL g_1520 */
static uint32_t g_1533 = 0UL;
static const int64_t g_1539 = 0x365C2A571A05D16CLL;
static uint8_t g_1598 = 249UL;
static int32_t g_1601[5][9] = {{0L,0L,0L,0L,0L,0L,0L,0L,0L},{(-3L),0xD9339C0AL,(-3L),0xD9339C0AL,(-3L),0xD9339C0AL,(-3L),0xD9339C0AL,(-3L)},{0L,0L,0L,0L,0L,0L,0L,0L,0L},{1L,0xD9339C0AL,1L,0xD9339C0AL,1L,0xD9339C0AL,1L,0xD9339C0AL,1L},{0L,0L,0L,0L,0L,0L,0L,0L,0L}};
static const int32_t ** volatile g_1664 = &g_1163[7];/* VOLATILE GLOBAL g_1664 */
static int8_t *g_1667 = &g_43[3][3];
static volatile uint64_t * volatile * const g_1688 = (void*)0;
static int8_t g_1689 = 0xB3L;
static volatile int32_t g_1696 = 0xE6AB8F6AL;/* VOLATILE GLOBAL g_1696 */
static int32_t g_1708 = 0xD7CBC176L;
static volatile uint8_t g_1709 = 0UL;/* VOLATILE GLOBAL g_1709 */
static uint64_t *g_1740 = &g_21;
static uint64_t **g_1739[4][2][1] = {{{(void*)0},{&g_1740}},{{&g_1740},{(void*)0}},{{&g_1740},{&g_1740}},{{(void*)0},{&g_1740}}};
static uint8_t *g_1791 = &g_1598;
static uint8_t **g_1790 = &g_1791;
static volatile uint8_t g_1851 = 0xC1L;/* VOLATILE GLOBAL g_1851 */
static uint16_t g_1891 = 0x1A04L;
static int32_t ** volatile g_1898 = &g_518[8][0][2];/* VOLATILE GLOBAL g_1898 */
static union U0 **** volatile g_1929 = (void*)0;/* VOLATILE GLOBAL g_1929 */
static union U0 **** volatile g_1930 = &g_741;/* VOLATILE GLOBAL g_1930 */
static volatile union U0 g_1936[8][9] = {{{0x7EEEL},{9L},{0xA64AL},{1L},{0x98B6L},{0xAD7AL},{-7L},{9L},{9L}},{{0x736CL},{1L},{9L},{1L},{9L},{1L},{0x736CL},{9L},{1L}},{{1L},{1L},{0xA64AL},{0xE570L},{0xAD7AL},{0L},{0x95A7L},{0xAD7AL},{1L}},{{0x736CL},{9L},{9L},{0x95A7L},{0xA64AL},{0xA64AL},{0x95A7L},{9L},{9L}},{{0x7EEEL},{9L},{0L},{-7L},{0xA64AL},{0L},{0x736CL},{9L},{9L}},{{0xE570L},{0xAD7AL},{0L},{0x95A7L},{0xAD7AL},{1L},{-7L},{1L},{0xAD7AL}},{{0xE570L},{9L},{9L},{0xE570L},{9L},{0xAD7AL},{0x7EEEL},{1L},{9L}},{{0x7EEEL},{9L},{0xA64AL},{1L},{0x98B6L},{0xAD7AL},{-7L},{9L},{9L}}};
static int32_t **g_1998 = &g_518[7][1][1];
static int32_t ***g_1997[3][1][2] = {{{(void*)0,&g_1998}},{{(void*)0,(void*)0}},{{&g_1998,(void*)0}}};
static union U0 g_2024 = {1L};/* VOLATILE GLOBAL g_2024 */
static volatile int8_t g_2139[3] = {0x25L,0x25L,0x25L};
static uint8_t g_2180 = 255UL;
static int64_t g_2247 = 0x19AC48E27782FB99LL;
static uint32_t g_2248 = 1UL;
static union U0 g_2284 = {0L};/* VOLATILE GLOBAL g_2284 */
static int16_t **g_2318 = (void*)0;
static uint64_t * const g_2355 = &g_281[1][3];
static volatile union U0 g_2363[8][4] = {{{-1L},{-1L},{-1L},{-1L}},{{-1L},{-1L},{-1L},{-1L}},{{-1L},{-1L},{-1L},{-1L}},{{-1L},{-1L},{-1L},{-1L}},{{-1L},{-1L},{-1L},{-1L}},{{-1L},{-1L},{-1L},{-1L}},{{-1L},{-1L},{-1L},{-1L}},{{-1L},{-1L},{-1L},{-1L}}};
static uint16_t g_2414 = 65531UL;
static int8_t * volatile * volatile * volatile * const  volatile *g_2420 = (void*)0;
static const uint32_t *g_2474 = &g_2248;
static const uint32_t **g_2473 = &g_2474;
static const uint32_t ***g_2472 = &g_2473;
static const uint32_t ****g_2471 = &g_2472;
static const uint32_t ***** volatile g_2470 = &g_2471;/* VOLATILE GLOBAL g_2470 */
static const volatile int32_t * const  volatile *g_2490 = (void*)0;
static int32_t g_2495 = 0xE18B30D2L;
static int32_t * const g_2494 = &g_2495;
static int32_t * const *g_2493 = &g_2494;
static volatile int32_t g_2511 = (-1L);/* VOLATILE GLOBAL g_2511 */
static volatile uint64_t g_2515 = 18446744073709551615UL;/* VOLATILE GLOBAL g_2515 */
static volatile union U0 g_2602 = {-2L};/* VOLATILE GLOBAL g_2602 */
static volatile uint32_t g_2644 = 0x1D9070C7L;/* VOLATILE GLOBAL g_2644 */
static volatile uint32_t *g_2643 = &g_2644;
static volatile uint32_t * volatile *g_2642 = &g_2643;
static const int32_t g_2662[4] = {0x09E75FC8L,0x09E75FC8L,0x09E75FC8L,0x09E75FC8L};
static uint32_t g_2763 = 4294967291UL;
static const uint8_t g_2767 = 0x16L;
static int32_t * volatile g_2773[2][4][1] = {{{&g_49},{&g_49},{&g_49},{&g_49}},{{&g_49},{&g_49},{&g_49},{&g_49}}};
static int32_t * volatile * volatile g_2774 = &g_518[3][2][2];/* VOLATILE GLOBAL g_2774 */
static uint64_t ** volatile *g_2786 = &g_1739[1][1][0];
static uint64_t ** volatile **g_2785 = &g_2786;
static const union U0 g_2809 = {0x5326L};/* VOLATILE GLOBAL g_2809 */
static int32_t * volatile g_2810 = &g_1708;/* VOLATILE GLOBAL g_2810 */
static union U0 g_2869 = {-1L};/* VOLATILE GLOBAL g_2869 */
static volatile union U0 g_2990 = {-4L};/* VOLATILE GLOBAL g_2990 */
static int32_t *g_3023 = &g_2495;
static int32_t **g_3022[4] = {&g_3023,&g_3023,&g_3023,&g_3023};
static int32_t ***g_3021 = &g_3022[2];
static int32_t *** volatile *g_3020 = &g_3021;
static int8_t g_3082 = 0L;
static volatile union U0 g_3113 = {1L};/* VOLATILE GLOBAL g_3113 */
static uint16_t *** volatile g_3226[5] = {&g_1318,&g_1318,&g_1318,&g_1318,&g_1318};
static uint16_t g_3270 = 0x0463L;
static const int32_t *g_3318[3] = {(void*)0,(void*)0,(void*)0};
static const int32_t ** volatile g_3317 = &g_3318[0];/* VOLATILE GLOBAL g_3317 */
static const union U0 *g_3334 = &g_2809;
static const union U0 **g_3333 = &g_3334;
static const union U0 ***g_3332 = &g_3333;
static const union U0 ****g_3331 = &g_3332;
static const union U0 *****g_3330 = &g_3331;
static volatile uint32_t g_3378[4][3] = {{0xB3CCDDE9L,0xB3CCDDE9L,0xB3CCDDE9L},{0xB3CCDDE9L,0xB3CCDDE9L,0xB3CCDDE9L},{0xB3CCDDE9L,0xB3CCDDE9L,0xB3CCDDE9L},{0xB3CCDDE9L,0xB3CCDDE9L,0xB3CCDDE9L}};
static int8_t g_3402[10][8][1] = {{{0xF4L},{0x77L},{0x7EL},{(-4L)},{0xF7L},{6L},{1L},{0x87L}},{{0x2BL},{(-5L)},{(-5L)},{0x2BL},{0x87L},{1L},{6L},{0xF7L}},{{(-4L)},{0x7EL},{0x77L},{0xF4L},{(-1L)},{(-1L)},{0x57L},{(-10L)}},{{(-1L)},{1L},{0xACL},{(-1L)},{0xEAL},{(-1L)},{0xACL},{1L}},{{(-1L)},{(-10L)},{0x57L},{(-1L)},{(-1L)},{0xF4L},{0x77L},{0x7EL}},{{(-4L)},{0xF7L},{6L},{1L},{0x87L},{0x2BL},{(-5L)},{(-5L)}},{{0x2BL},{0x87L},{1L},{6L},{0xF7L},{(-4L)},{0x7EL},{0x77L}},{{0xF4L},{(-1L)},{(-1L)},{0x57L},{(-10L)},{(-1L)},{1L},{0xACL}},{{(-1L)},{0xEAL},{(-1L)},{0xACL},{1L},{(-1L)},{(-10L)},{0x57L}},{{(-1L)},{(-1L)},{0xF4L},{0x77L},{0x7EL},{(-4L)},{0xF7L},{6L}}};
static uint32_t ***g_3484 = &g_828;
static uint32_t ****g_3483[10] = {(void*)0,(void*)0,(void*)0,(void*)0,(void*)0,(void*)0,(void*)0,(void*)0,(void*)0,(void*)0};
static uint32_t *****g_3482[4] = {&g_3483[0],&g_3483[0],&g_3483[0],&g_3483[0]};
static const int16_t g_3763 = 4L;
static union U0 g_3773[2][7] = {{{0L},{0L},{0L},{0L},{0L},{0L},{0L}},{{0x1640L},{0x1640L},{0x1640L},{0x1640L},{0x1640L},{0x1640L},{0x1640L}}};
static volatile uint32_t g_3843 = 0UL;/* VOLATILE GLOBAL g_3843 */


/* --- FORWARD DECLARATIONS --- */
static union U0  func_1(void);
static uint8_t  func_6(int32_t  p_7, int8_t * p_8);
static int8_t  func_13(int32_t  p_14);
static int32_t  func_15(int64_t  p_16, uint32_t  p_17, uint64_t * p_18, uint64_t * const  p_19);
static int32_t  func_26(uint64_t * p_27, const int16_t  p_28, int8_t  p_29, int8_t * p_30, uint64_t * p_31);
static uint32_t  func_79(int64_t * p_80, int8_t * p_81);
static int64_t * func_82(int8_t * p_83, uint32_t  p_84, uint16_t  p_85);
static uint64_t  func_100(uint32_t  p_101);
static uint32_t  func_102(uint32_t  p_103, const int16_t  p_104, int32_t  p_105, uint16_t  p_106);
static uint32_t  func_108(uint64_t * p_109, int64_t * const  p_110);


/* --- FUNCTIONS --- */
/* ------------------------------------------ */
/* 
 * reads : g_3 g_3843 g_740 g_741 g_742 g_743 g_711
 * writes: g_3 g_3843
 */
static union U0  func_1(void)
{ /* block id: 0 */
    uint16_t l_10[4][9][6] = {{{2UL,0x1600L,0xA14CL,0x5EAFL,0x5EAFL,0xA14CL},{0x5EAFL,0x5EAFL,0xA14CL,0x1600L,2UL,2UL},{0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL,0xA14CL},{2UL,0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL},{2UL,0x1600L,0xA14CL,0x5EAFL,0x5EAFL,0xA14CL},{0x5EAFL,0x5EAFL,0xA14CL,0x1600L,2UL,2UL},{0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL,0xA14CL},{2UL,0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL},{2UL,0x1600L,0xA14CL,0x5EAFL,0x5EAFL,0xA14CL}},{{0x5EAFL,0x5EAFL,0xA14CL,0x1600L,2UL,2UL},{0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL,0xA14CL},{2UL,0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL},{2UL,0x1600L,0xA14CL,0x5EAFL,0x5EAFL,0xA14CL},{0x5EAFL,0x5EAFL,0xA14CL,0x1600L,2UL,2UL},{0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL,0xA14CL},{2UL,0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL},{2UL,0x1600L,0xA14CL,0x5EAFL,0x5EAFL,0xA14CL},{0x5EAFL,0x5EAFL,0xA14CL,0x1600L,2UL,2UL}},{{0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL,0xA14CL},{2UL,0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL},{2UL,0x1600L,0xA14CL,0x5EAFL,0x5EAFL,0xA14CL},{0x5EAFL,0x5EAFL,0xA14CL,0x1600L,2UL,2UL},{0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL,0xA14CL},{2UL,0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL},{2UL,0x1600L,0xA14CL,0x5EAFL,0x5EAFL,0xA14CL},{0x5EAFL,0x5EAFL,0xA14CL,0x1600L,2UL,2UL},{0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL,0xA14CL}},{{2UL,0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL},{2UL,0x1600L,0xA14CL,0x5EAFL,0x5EAFL,0xA14CL},{0x5EAFL,0x5EAFL,0xA14CL,0x1600L,2UL,2UL},{0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL,0xA14CL},{2UL,0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL},{2UL,0x1600L,0xA14CL,0x5EAFL,0x5EAFL,0xA14CL},{0x5EAFL,0x5EAFL,0xA14CL,0x1600L,2UL,2UL},{0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL,0xA14CL},{2UL,0x5EAFL,0x1600L,0x1600L,0x5EAFL,2UL}}};
    uint64_t *l_20 = &g_21;
    int32_t l_41 = (-8L);
    int32_t l_3734 = (-1L);
    uint32_t ****l_3755[3][8][4] = {{{&g_3484,(void*)0,&g_3484,(void*)0},{&g_3484,(void*)0,&g_3484,(void*)0},{&g_3484,(void*)0,&g_3484,&g_3484},{&g_3484,&g_3484,(void*)0,&g_3484},{&g_3484,&g_3484,&g_3484,&g_3484},{&g_3484,&g_3484,&g_3484,&g_3484},{&g_3484,&g_3484,(void*)0,(void*)0},{&g_3484,&g_3484,&g_3484,(void*)0}},{{&g_3484,&g_3484,&g_3484,(void*)0},{&g_3484,&g_3484,&g_3484,&g_3484},{&g_3484,(void*)0,&g_3484,&g_3484},{&g_3484,&g_3484,&g_3484,&g_3484},{&g_3484,(void*)0,&g_3484,&g_3484},{&g_3484,&g_3484,&g_3484,&g_3484},{&g_3484,&g_3484,&g_3484,&g_3484},{&g_3484,&g_3484,(void*)0,&g_3484}},{{&g_3484,(void*)0,&g_3484,&g_3484},{(void*)0,&g_3484,&g_3484,&g_3484},{(void*)0,(void*)0,&g_3484,&g_3484},{&g_3484,&g_3484,(void*)0,(void*)0},{&g_3484,&g_3484,&g_3484,(void*)0},{&g_3484,&g_3484,&g_3484,(void*)0},{&g_3484,&g_3484,&g_3484,&g_3484},{&g_3484,(void*)0,&g_3484,&g_3484}}};
    union U0 *l_3767 = &g_711;
    int32_t l_3809 = (-9L);
    int8_t ** const *l_3831 = &g_123;
    int32_t *l_3832 = &g_3[2][3];
    int32_t *l_3833 = (void*)0;
    int32_t *l_3834 = &l_41;
    int32_t *l_3835 = &g_1601[4][1];
    int32_t *l_3836 = (void*)0;
    int32_t *l_3837 = (void*)0;
    int32_t *l_3838 = &l_3809;
    int32_t *l_3839 = &g_1601[4][5];
    int32_t *l_3840 = &g_1601[4][4];
    int32_t *l_3841[2][4][3] = {{{&g_250[2][9],&g_250[2][9],&l_3809},{&l_3734,&g_3[2][3],&g_3[2][3]},{&l_3809,&g_1601[4][4],&g_250[0][0]},{&l_3734,&l_41,&l_3734}},{{&g_250[2][9],&l_3809,&g_250[0][0]},{(void*)0,(void*)0,&g_3[2][3]},{&g_1601[4][4],&l_3809,&l_3809},{&g_3[2][3],&l_41,&g_3[3][4]}}};
    int64_t l_3842 = (-6L);
    int i, j, k;
    for (g_3[2][3] = 12; (g_3[2][3] > (-24)); g_3[2][3]--)
    { /* block id: 3 */
        uint64_t *l_11 = &g_12[5][1][2];
        int8_t *l_24 = &g_25;
        uint64_t *l_32 = &g_21;
        int32_t l_33 = (-1L);
        int8_t *l_42 = &g_43[3][3];
        uint32_t *l_2395[3][8][1] = {{{&g_1533},{&g_1533},{&g_1533},{&g_1533},{&g_1533},{&g_1533},{&g_1533},{&g_1533}},{{&g_1533},{&g_1533},{&g_1533},{&g_1533},{&g_1533},{&g_1533},{&g_1533},{&g_1533}},{{&g_1533},{&g_1533},{&g_1533},{&g_1533},{&g_1533},{&g_1533},{&g_1533},{&g_1533}}};
        int32_t l_3735 = 0x4DF2468AL;
        int32_t l_3738 = 0xC724389CL;
        const uint32_t **** const l_3756 = (void*)0;
        uint16_t *l_3758 = (void*)0;
        uint16_t ** const l_3757 = &l_3758;
        int32_t l_3768 = (-1L);
        int8_t l_3776 = 0x03L;
        uint64_t l_3777 = 1UL;
        const union U0 * const *l_3786[10][8][3] = {{{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,(void*)0,&g_3334}},{{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,(void*)0,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334}},{{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,(void*)0,&g_3334},{&g_3334,&g_3334,&g_3334},{(void*)0,&g_3334,&g_3334}},{{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,(void*)0,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334}},{{&g_3334,&g_3334,&g_3334},{&g_3334,(void*)0,&g_3334},{&g_3334,&g_3334,&g_3334},{(void*)0,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334}},{{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,(void*)0,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,(void*)0,(void*)0}},{{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{(void*)0,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334}},{{&g_3334,&g_3334,&g_3334},{&g_3334,(void*)0,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,(void*)0,&g_3334},{&g_3334,&g_3334,&g_3334},{(void*)0,&g_3334,&g_3334}},{{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,(void*)0,&g_3334}},{{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,(void*)0,(void*)0},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{&g_3334,&g_3334,&g_3334},{(void*)0,&g_3334,&g_3334}}};
        const union U0 * const **l_3785 = &l_3786[7][5][0];
        const union U0 * const ***l_3784 = &l_3785;
        const union U0 * const ***l_3790 = &l_3785;
        int16_t l_3811 = 0xBC1EL;
        uint32_t l_3825 = 2UL;
        int i, j, k;
    }
    g_3843++;
    return (****g_740);
}


/* ------------------------------------------ */
/* 
 * reads : g_1667 g_1270.f0 g_1317 g_170 g_401 g_2414 g_2355 g_1740 g_250 g_1316 g_1066 g_3 g_1791 g_1598 g_1010 g_49 g_2990 g_366 g_367 g_281 g_1162 g_1163 g_368 g_3020 g_455 g_588 g_234 g_140 g_123 g_124 g_43 g_742 g_1998 g_1930 g_741 g_3082 g_1360 g_3113 g_2809.f1 g_3021 g_3022 g_3023 g_993.f1 g_2642 g_2643 g_2644 g_2785 g_2786 g_1739 g_2495 g_1689 g_2247 g_1404.f1 g_176 g_173 g_1108 g_518 g_3331 g_3332 g_3333 g_3334 g_779 g_1533 g_1095.f1 g_921 g_217 g_807 g_1055 g_21 g_3482 g_326 g_1113 g_1601 g_1181 g_1182 g_2471 g_2472
 * writes: g_43 g_401 g_588 g_281 g_21 g_921 g_2420 g_1598 g_1533 g_49 g_250 g_1163 g_1930 g_455 g_1036 g_743 g_518 g_741 g_1361 g_3023 g_711.f4 g_170 g_1689 g_2 g_2180 g_742 g_173 g_25 g_807 g_729 g_3482 g_2495
 */
static uint8_t  func_6(int32_t  p_7, int8_t * p_8)
{ /* block id: 1158 */
    int32_t l_2398 = (-1L);
    uint16_t *l_2407 = &g_401;
    int32_t l_2415 = 0x2A83BE3CL;
    int16_t *l_2416 = &g_588[4][0][1];
    int32_t l_2458 = 0x0A36E3E2L;
    int32_t l_2461 = 8L;
    int32_t l_2462 = 5L;
    uint32_t l_2463 = 4294967289UL;
    int32_t l_2513 = 9L;
    int32_t l_2514 = (-1L);
    int16_t ***l_2544 = (void*)0;
    const int16_t l_2560[6][4] = {{(-1L),0L,0L,(-1L)},{(-1L),0L,0L,0L},{0L,0xDA07L,0L,0L},{(-1L),(-1L),0L,0L},{(-1L),0xDA07L,(-1L),0L},{0L,(-1L),(-1L),0L}};
    uint32_t ** const *l_2614 = &g_828;
    uint32_t ** const **l_2613 = &l_2614;
    uint32_t ** const ***l_2612 = &l_2613;
    uint32_t *****l_2663 = (void*)0;
    int32_t l_2692[1];
    uint32_t l_2719 = 0xD2DC04FAL;
    uint64_t l_2734 = 0x64FE08E875B059A0LL;
    uint32_t l_2766[4][6] = {{4294967289UL,0xEBCCFB12L,0x73EFC682L,0xEBCCFB12L,4294967289UL,4294967289UL},{0xBB9BE894L,0xEBCCFB12L,0xEBCCFB12L,0xBB9BE894L,3UL,0xBB9BE894L},{0xBB9BE894L,3UL,0xBB9BE894L,0xEBCCFB12L,0xEBCCFB12L,0xBB9BE894L},{4294967289UL,4294967289UL,0xEBCCFB12L,0x73EFC682L,0xEBCCFB12L,4294967289UL}};
    int32_t *l_2768 = &g_250[2][8];
    uint64_t ***l_2788[1];
    uint64_t ****l_2787 = &l_2788[0];
    uint64_t l_2789 = 0xB3EA741F3561C067LL;
    const int64_t **l_2799 = (void*)0;
    const int64_t ***l_2798 = &l_2799;
    uint64_t ****l_2800 = &l_2788[0];
    uint8_t *l_2865 = (void*)0;
    union U0 *l_2867 = &g_1066;
    int64_t l_3033 = 0x3F29C949C510418BLL;
    int64_t **l_3090 = &g_1362;
    int32_t *** const *l_3130 = (void*)0;
    union U0 ***l_3218 = &g_742;
    uint16_t **l_3227 = &l_2407;
    int8_t **l_3273 = (void*)0;
    uint64_t *****l_3309 = (void*)0;
    uint8_t l_3429 = 0x7CL;
    const int64_t *l_3471 = &g_921;
    int32_t l_3692 = 0xC6B9FE21L;
    uint8_t l_3693 = 0x55L;
    uint32_t l_3703[9] = {1UL,1UL,4294967295UL,1UL,1UL,4294967295UL,1UL,1UL,4294967295UL};
    uint32_t l_3712 = 0UL;
    int i, j;
    for (i = 0; i < 1; i++)
        l_2692[i] = 1L;
    for (i = 0; i < 1; i++)
        l_2788[i] = (void*)0;
    if ((safe_rshift_func_uint8_t_u_s(p_7, ((p_7 | (((*g_1740) = ((*g_2355) = (((*g_1667) = l_2398) <= (safe_mul_func_int16_t_s_s(((safe_sub_func_int64_t_s_s((safe_add_func_uint32_t_u_u(g_1270.f0, (safe_lshift_func_int16_t_s_u(l_2398, (*g_1317))))), ((++(*l_2407)) && ((*l_2416) = ((((safe_div_func_int16_t_s_s((safe_mod_func_int64_t_s_s((l_2415 = (g_2414 ^ l_2398)), l_2398)), p_7)) , 2L) >= l_2398) ^ p_7))))) < 0L), p_7))))) == p_7)) & 0xC279L))))
    { /* block id: 1165 */
        uint64_t l_2417 = 0x138F116C28FC0BA2LL;
        p_7 = l_2417;
    }
    else
    { /* block id: 1167 */
        int32_t l_2452[8][9][3] = {{{0x77742FCFL,0L,0xD34765B4L},{0L,0xCFD82A78L,0L},{0L,0xCCED4C0BL,(-7L)},{0x77742FCFL,0x6513FAE1L,0x035402FAL},{(-7L),0xACABDFAEL,0xD50DEC83L},{0x515A44AEL,0L,0L},{(-10L),0L,0L},{1L,(-1L),0x0DEFB64CL},{0x6513FAE1L,0x2FFEEE08L,0x38FA28FFL}},{{0x38FA28FFL,(-7L),0L},{0x035402FAL,0x2FFEEE08L,0L},{0x05D53980L,(-1L),2L},{0xB7E3387DL,0L,(-1L)},{0x90ABC462L,0L,0x05D53980L},{0L,0xACABDFAEL,0L},{(-1L),0x6513FAE1L,0xA33A058BL},{0L,0xCCED4C0BL,0xACABDFAEL},{(-1L),0xCFD82A78L,0xACABDFAEL}},{{0L,0L,0xA33A058BL},{9L,0x515A44AEL,0L},{0L,0xA33A058BL,0x05D53980L},{(-1L),0x38FA28FFL,(-1L)},{2L,0x111D543DL,2L},{1L,2L,0L},{0L,0x05D53980L,0L},{(-1L),0x0DEFB64CL,0x38FA28FFL},{0L,0L,0x0DEFB64CL}},{{1L,0x657DFCBCL,0L},{2L,0x90ABC462L,0L},{(-1L),1L,0xD50DEC83L},{0L,9L,0x035402FAL},{9L,(-10L),(-7L)},{0L,1L,0L},{(-1L),1L,0xD34765B4L},{0L,(-10L),0xCCED4C0BL},{(-1L),9L,2L}},{{0L,1L,(-1L)},{0x90ABC462L,0x90ABC462L,0xF547F2D2L},{0xB7E3387DL,0x657DFCBCL,0xCFD82A78L},{0x05D53980L,0L,(-10L)},{0x035402FAL,0x0DEFB64CL,0xE30BFB3FL},{0x38FA28FFL,0x05D53980L,(-10L)},{0x6513FAE1L,2L,0xCFD82A78L},{1L,0x111D543DL,0xF547F2D2L},{(-10L),0x38FA28FFL,(-1L)}},{{0x515A44AEL,0xA33A058BL,2L},{(-7L),0x515A44AEL,0xCCED4C0BL},{0x77742FCFL,0L,0xD34765B4L},{0L,0xCFD82A78L,0L},{0L,0xCCED4C0BL,(-7L)},{0x77742FCFL,0x6513FAE1L,0x035402FAL},{(-1L),0x6513FAE1L,(-1L)},{0xCFD82A78L,0xA33A058BL,0xA33A058BL},{0xACABDFAEL,0L,0xBF26B8D8L}},{{(-1L),0xD34765B4L,0x90ABC462L},{(-7L),1L,(-10L)},{(-10L),(-1L),(-1L)},{0L,1L,0L},{0x2FFEEE08L,0xD34765B4L,0x035402FAL},{0x0DEFB64CL,0L,0L},{0x77742FCFL,0xA33A058BL,0x2FFEEE08L},{0L,0x6513FAE1L,0x657DFCBCL},{(-1L),(-7L),2L}},{{0xA33A058BL,0xE30BFB3FL,0x6513FAE1L},{0xB7E3387DL,0x111D543DL,0x6513FAE1L},{0x657DFCBCL,(-1L),2L},{(-1L),0xCFD82A78L,0x657DFCBCL},{9L,2L,0x2FFEEE08L},{0L,(-10L),0L},{0xCCED4C0BL,0xB879EC21L,0x035402FAL},{0x9B3457D7L,0x035402FAL,0L},{0L,0x2FFEEE08L,(-1L)}}};
        int32_t l_2453 = (-1L);
        int32_t l_2455 = (-8L);
        int32_t l_2456 = (-1L);
        int32_t l_2459 = 0xFADF2260L;
        int32_t l_2460 = 5L;
        int32_t l_2510 = 0xE35E6141L;
        int32_t l_2512 = 0x6807325DL;
        const uint64_t *l_2565 = &g_12[5][1][2];
        const uint64_t **l_2564 = &l_2565;
        const uint64_t ***l_2563 = &l_2564;
        int8_t *l_2686 = &g_2284.f1;
        uint16_t l_2761[3];
        union U0 *l_2868[2];
        uint8_t l_2881 = 0x89L;
        int32_t l_2909[7][1] = {{0xF118B02EL},{0xF118B02EL},{0L},{0xF118B02EL},{0xF118B02EL},{0L},{0xF118B02EL}};
        uint16_t l_2915 = 1UL;
        int32_t l_2946 = (-8L);
        uint64_t *l_2954 = &l_2789;
        uint64_t **l_2958 = &g_1740;
        int8_t *** const l_2991[6][3] = {{(void*)0,&g_123,&g_123},{(void*)0,&g_123,&g_123},{(void*)0,&g_123,&g_123},{(void*)0,&g_123,&g_123},{(void*)0,&g_123,&g_123},{(void*)0,&g_123,&g_123}};
        int16_t l_3053 = 0xC0ACL;
        int32_t ****l_3242[5];
        uint16_t l_3249 = 65535UL;
        int i, j, k;
        for (i = 0; i < 3; i++)
            l_2761[i] = 3UL;
        for (i = 0; i < 2; i++)
            l_2868[i] = &g_2869;
        for (i = 0; i < 5; i++)
            l_3242[i] = (void*)0;
lbl_2960:
        for (g_921 = (-17); (g_921 > 9); g_921 = safe_add_func_uint16_t_u_u(g_921, 4))
        { /* block id: 1170 */
            int16_t l_2421[5];
            union U0 ***l_2425[9][1][10] = {{{&g_742,&g_742,(void*)0,&g_742,&g_742,(void*)0,(void*)0,&g_742,&g_742,(void*)0}},{{&g_742,&g_742,(void*)0,(void*)0,&g_742,&g_742,&g_742,(void*)0,&g_742,&g_742}},{{&g_742,&g_742,&g_742,&g_742,&g_742,&g_742,&g_742,(void*)0,&g_742,(void*)0}},{{&g_742,&g_742,&g_742,&g_742,(void*)0,&g_742,(void*)0,&g_742,(void*)0,(void*)0}},{{&g_742,(void*)0,&g_742,(void*)0,(void*)0,(void*)0,&g_742,(void*)0,&g_742,(void*)0}},{{&g_742,&g_742,&g_742,(void*)0,(void*)0,&g_742,(void*)0,&g_742,&g_742,&g_742}},{{&g_742,(void*)0,&g_742,(void*)0,&g_742,&g_742,(void*)0,&g_742,&g_742,&g_742}},{{(void*)0,&g_742,&g_742,(void*)0,(void*)0,&g_742,&g_742,(void*)0,(void*)0,&g_742}},{{(void*)0,(void*)0,&g_742,&g_742,(void*)0,&g_742,&g_742,&g_742,&g_742,&g_742}}};
            int32_t *l_2450[6][5][8] = {{{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]}},{{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]}},{{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]}},{{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]}},{{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]}},{{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]},{&g_3[2][3],&g_49,&g_49,&g_3[2][3],&g_3[2][3],&g_49,&g_49,&g_3[2][3]}}};
            int32_t l_2454 = (-4L);
            int16_t l_2561 = 0x71ECL;
            uint64_t *l_2637 = (void*)0;
            const int32_t *l_2661 = &g_2662[2];
            uint16_t *l_2675[1][4][5] = {{{&g_213,&g_213,&g_1891,&g_1891,&g_213},{&g_213,&g_213,&g_1891,&g_1891,&g_213},{&g_213,&g_213,&g_1891,&g_1891,&g_213},{&g_213,&g_213,&g_1891,&g_1891,&g_213}}};
            uint16_t *l_2676 = &g_401;
            uint32_t *l_2681 = &g_116;
            uint32_t l_2691 = 18446744073709551607UL;
            uint64_t l_2720 = 0UL;
            uint64_t l_2762 = 0x48A43C2967DDF64ALL;
            int i, j, k;
            for (i = 0; i < 5; i++)
                l_2421[i] = 5L;
            g_2420 = (void*)0;
            if (((0x332FL >= 1L) == l_2415))
            { /* block id: 1172 */
                p_7 &= l_2421[4];
            }
            else
            { /* block id: 1174 */
                int8_t l_2422[8][8][4] = {{{7L,(-6L),(-6L),1L},{0xA9L,9L,0xABL,(-10L)},{0x81L,4L,0xA4L,0x03L},{4L,(-6L),0x0FL,1L},{0xA8L,0xA4L,0xBEL,0xA9L},{0x09L,0xA8L,0x0AL,0xA4L},{1L,0x34L,1L,0x9EL},{1L,0xBEL,0xBEL,1L}},{{0x41L,1L,9L,1L},{4L,0x11L,0x14L,0x34L},{(-10L),0xD1L,0xABL,0x34L},{(-6L),0x11L,0x81L,1L},{7L,1L,0x14L,1L},{0x1BL,0xBEL,(-6L),0x9EL},{0xD1L,0x34L,0xC4L,0xA4L},{0x6BL,0xA8L,(-2L),0xA9L}},{{0x1BL,0xA4L,(-1L),1L},{1L,(-6L),0x81L,0x03L},{0xA9L,4L,(-1L),(-10L)},{(-10L),9L,0xA4L,1L},{9L,(-6L),9L,0x0AL},{0xA8L,0x1BL,0x2AL,0xA9L},{1L,0x41L,0x0AL,0x1BL},{0x03L,0x34L,0x0AL,0xC4L}},{{1L,(-1L),0x2AL,1L},{0xA8L,0x03L,9L,0x11L},{9L,0x11L,0xA4L,0x04L},{(-10L),0x6BL,(-1L),0x34L},{0xA9L,1L,0x81L,0x11L},{1L,1L,(-1L),0x09L},{0x1BL,(-1L),(-2L),0x9EL},{0x6BL,0x04L,0xC4L,0x1BL}},{{0xD1L,0xA8L,(-6L),(-6L)},{0x1BL,0x1BL,0x34L,0x41L},{0x0AL,0x9AL,0x18L,0x09L},{0x0FL,0xD9L,1L,0x18L},{0x03L,0xD9L,(-10L),0x09L},{0xD9L,0x9AL,0L,0x41L},{0x2AL,0x81L,(-1L),0x0FL},{1L,0xBEL,0xA8L,0x81L}},{{0x09L,0xABL,(-5L),(-6L)},{0xE4L,0xABL,(-1L),0xE4L},{0xBEL,0x09L,8L,0xA4L},{0xD9L,0x14L,(-6L),0xD1L},{0x18L,1L,1L,0xABL},{9L,0xA4L,1L,0xA4L},{0x0AL,0xBEL,0x9AL,1L},{(-6L),0xABL,0x0FL,(-2L)}},{{1L,0xD1L,0xA9L,0x81L},{1L,0x2AL,0x0FL,9L},{(-6L),0x81L,0x9AL,(-5L)},{0x0AL,0x04L,1L,0x09L},{9L,0L,1L,0x03L},{0x18L,0xD9L,(-6L),0xBEL},{0xD9L,0x04L,8L,0x41L},{0xBEL,(-6L),(-1L),9L}},{{0xE4L,0xBEL,(-5L),(-6L)},{0x09L,0xD1L,0xA8L,(-6L)},{1L,(-1L),(-1L),1L},{0x2AL,0x09L,0L,0x14L},{0xD9L,0xA4L,(-10L),0xD1L},{0x03L,0x54L,1L,0xD1L},{0x0FL,0xA4L,0x18L,0x14L},{0x0AL,0x09L,0x34L,1L}}};
                int i, j, k;
                return l_2422[7][0][1];
            }
        }
        for (g_1598 = 0; (g_1598 <= 1); g_1598 += 1)
        { /* block id: 1356 */
            uint32_t l_2889[9][2][5] = {{{0x233D4B2CL,4294967295UL,4294967295UL,0x233D4B2CL,0x85EA2943L},{0UL,0x233D4B2CL,4294967293UL,0x621A57B8L,0UL}},{{0UL,4294967293UL,0x85EA2943L,4294967293UL,0UL},{0x233D4B2CL,1UL,0UL,0x621A57B8L,4294967295UL}},{{0UL,1UL,0x233D4B2CL,0x233D4B2CL,1UL},{0x85EA2943L,4294967293UL,0UL,1UL,4294967295UL}},{{4294967293UL,0x233D4B2CL,0UL,0x5F668B0BL,0UL},{4294967295UL,4294967295UL,0x233D4B2CL,0x85EA2943L,0UL}},{{4294967293UL,0UL,0UL,0x85EA2943L,0x85EA2943L},{0x85EA2943L,4294967293UL,0x85EA2943L,0x5F668B0BL,0x621A57B8L}},{{0UL,0UL,4294967293UL,1UL,0x621A57B8L},{0x233D4B2CL,4294967295UL,4294967295UL,0x233D4B2CL,0x85EA2943L}},{{0UL,0x233D4B2CL,4294967293UL,0x621A57B8L,0UL},{0UL,4294967293UL,0x85EA2943L,4294967293UL,0UL}},{{4294967295UL,0x233D4B2CL,0x85EA2943L,0UL,0x5F668B0BL},{0x85EA2943L,0x233D4B2CL,4294967295UL,4294967295UL,0x233D4B2CL}},{{1UL,4294967293UL,0UL,0x233D4B2CL,0x5F668B0BL},{4294967293UL,4294967295UL,0UL,4294967293UL,0UL}}};
            int32_t *l_2894[7] = {&l_2460,&l_2460,&l_2460,&l_2460,&l_2460,&l_2460,&l_2460};
            int16_t l_2979 = 0x742AL;
            int16_t l_2985 = (-3L);
            const int8_t **l_2993 = (void*)0;
            const int8_t ***l_2992[5][9] = {{&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993},{&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,(void*)0,&l_2993,(void*)0},{&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993},{&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,(void*)0,&l_2993,(void*)0},{&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993,&l_2993}};
            uint64_t ****l_2997 = &l_2788[0];
            int32_t l_3039 = 0xFA009E3BL;
            uint32_t l_3041[3][7] = {{0xE87BEE4AL,0xE87BEE4AL,0xE87BEE4AL,0xE87BEE4AL,0xE87BEE4AL,0xE87BEE4AL,0xE87BEE4AL},{3UL,3UL,3UL,3UL,3UL,3UL,3UL},{0xE87BEE4AL,0xE87BEE4AL,0xE87BEE4AL,0xE87BEE4AL,0xE87BEE4AL,0xE87BEE4AL,0xE87BEE4AL}};
            int32_t l_3124 = 0xF46CE27AL;
            union U0 *** const *l_3141[2][6][10] = {{{&g_741,(void*)0,(void*)0,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741},{&g_741,&g_741,(void*)0,(void*)0,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741},{&g_741,&g_741,&g_741,&g_741,&g_741,(void*)0,(void*)0,(void*)0,(void*)0,&g_741},{(void*)0,&g_741,&g_741,&g_741,(void*)0,&g_741,(void*)0,&g_741,&g_741,&g_741},{&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741},{&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741}},{{&g_741,&g_741,(void*)0,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741},{(void*)0,(void*)0,&g_741,(void*)0,&g_741,(void*)0,(void*)0,&g_741,(void*)0,&g_741},{&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741},{&g_741,(void*)0,&g_741,&g_741,&g_741,&g_741,&g_741,(void*)0,(void*)0,&g_741},{(void*)0,&g_741,&g_741,(void*)0,&g_741,&g_741,&g_741,&g_741,&g_741,&g_741},{&g_741,&g_741,&g_741,(void*)0,&g_741,&g_741,(void*)0,&g_741,&g_741,(void*)0}}};
            union U0 *** const * const *l_3140 = &l_3141[0][0][7];
            union U0 *****l_3144 = (void*)0;
            uint8_t **l_3195 = &l_2865;
            int i, j, k;
            if ((safe_sub_func_int64_t_s_s((safe_mod_func_uint64_t_u_u((p_7 >= (l_2881 ^ ((*g_1740) = ((safe_div_func_int16_t_s_s((((+(*l_2768)) || (((safe_mul_func_int16_t_s_s((safe_div_func_uint64_t_u_u(l_2889[4][0][0], (l_2512 = (safe_add_func_int64_t_s_s(l_2455, ((*g_2355) = 18446744073709551610UL)))))), ((safe_mul_func_uint16_t_u_u((**g_1316), p_7)) == (l_2894[2] == &p_7)))) == 4L) , (*l_2768))) , p_7), (*g_1317))) , (*l_2768))))), 0x897E56E4F4FE7FD9LL)), p_7)))
            { /* block id: 1360 */
                uint32_t l_2902[3];
                int32_t l_2907[1][4];
                int32_t l_2932[6];
                const uint8_t l_2984 = 0x61L;
                int32_t l_3000 = 6L;
                int i, j;
                for (i = 0; i < 3; i++)
                    l_2902[i] = 0xD70BEB80L;
                for (i = 0; i < 1; i++)
                {
                    for (j = 0; j < 4; j++)
                        l_2907[i][j] = 1L;
                }
                for (i = 0; i < 6; i++)
                    l_2932[i] = 0L;
                for (l_2461 = 2; (l_2461 >= 0); l_2461 -= 1)
                { /* block id: 1363 */
                    uint8_t **l_2899 = &l_2865;
                    uint32_t *l_2903 = (void*)0;
                    uint32_t *l_2904 = &l_2766[1][4];
                    int32_t l_2911 = 0x9670A804L;
                    int32_t l_2913[10][3];
                    int i, j;
                    for (i = 0; i < 10; i++)
                    {
                        for (j = 0; j < 3; j++)
                            l_2913[i][j] = 0xD5625BAAL;
                    }
                }
                p_7 ^= 0x39484877L;
                for (g_1533 = 0; (g_1533 <= 9); g_1533 += 1)
                { /* block id: 1409 */
                    uint64_t l_2967 = 0xB608C11D743666BALL;
                    uint64_t *****l_2998 = (void*)0;
                    uint64_t *****l_2999 = &l_2800;
                    if (((*g_1010) ^= (((safe_unary_minus_func_int64_t_s(p_7)) && (safe_rshift_func_uint8_t_u_u(((*l_2867) , ((((((l_2967 >= (~((((safe_sub_func_uint8_t_u_u(((void*)0 != &g_1317), (p_7 < ((safe_mul_func_uint16_t_u_u((((l_2907[0][3] &= (safe_sub_func_uint8_t_u_u((safe_rshift_func_uint8_t_u_u((safe_mod_func_uint32_t_u_u((l_2979 < (((safe_div_func_uint16_t_u_u((safe_mul_func_uint16_t_u_u((*g_1317), ((*l_2407) = (*l_2768)))), 0x1567L)) >= (*g_1317)) & 0x06AEA568BAF0DA4ELL)), 4294967295UL)), 4)), l_2510))) & g_3[2][3]) == p_7), p_7)) <= (**g_1316))))) <= 4UL) | 0x25BAD0B7AF61FCB1LL) > 0xA678DE90L))) <= (*g_1791)) < p_7) == p_7) > l_2984) || 4L)), 1))) && l_2985)))
                    { /* block id: 1413 */
                        return p_7;
                    }
                    else
                    { /* block id: 1415 */
                        const int64_t l_2994 = 0x65FFD960145AFAD9LL;
                        (*l_2768) &= (0xAA69L || ((safe_lshift_func_int8_t_s_s((g_2990 , ((l_2991[4][1] != l_2992[3][6]) , l_2994)), 1)) == 0x32L));
                    }
                    (*g_1010) |= (safe_sub_func_uint64_t_u_u((((*l_2954) = (((*l_2999) = ((p_8 == (*g_366)) , l_2997)) != &l_2788[0])) <= ((*g_2355)++)), (safe_lshift_func_uint8_t_u_s(0x99L, 7))));
                    for (l_2462 = 2; (l_2462 >= 0); l_2462 -= 1)
                    { /* block id: 1424 */
                        const int32_t **l_3005 = &g_1163[1];
                        (*l_3005) = (*g_1162);
                    }
                }
            }
            else
            { /* block id: 1428 */
                union U0 ****l_3006 = &g_741;
                int32_t l_3034 = 0x87157F27L;
                g_1930 = l_3006;
                for (l_2462 = 8; (l_2462 >= 0); l_2462 -= 1)
                { /* block id: 1432 */
                    uint8_t *l_3028 = (void*)0;
                    int32_t ** const *l_3036 = &g_3022[2];
                    int32_t ** const **l_3035[2][5][7] = {{{&l_3036,&l_3036,&l_3036,&l_3036,&l_3036,&l_3036,&l_3036},{&l_3036,&l_3036,&l_3036,(void*)0,(void*)0,&l_3036,(void*)0},{&l_3036,&l_3036,&l_3036,&l_3036,&l_3036,&l_3036,&l_3036},{(void*)0,(void*)0,&l_3036,&l_3036,(void*)0,(void*)0,&l_3036},{&l_3036,&l_3036,&l_3036,&l_3036,&l_3036,&l_3036,&l_3036}},{{(void*)0,&l_3036,(void*)0,(void*)0,&l_3036,&l_3036,(void*)0},{&l_3036,&l_3036,&l_3036,&l_3036,&l_3036,&l_3036,&l_3036},{(void*)0,(void*)0,&l_3036,(void*)0,(void*)0,&l_3036,&l_3036},{&l_3036,&l_3036,&l_3036,&l_3036,&l_3036,&l_3036,&l_3036},{(void*)0,&l_3036,&l_3036,&l_3036,&l_3036,&l_3036,&l_3036}}};
                    int16_t *l_3037 = (void*)0;
                    int16_t *l_3038 = &g_1036;
                    uint64_t l_3040 = 18446744073709551606UL;
                    int i, j, k;
                    (*g_140) &= (safe_add_func_int64_t_s_s(((*l_2768) >= (safe_lshift_func_int16_t_s_s((safe_lshift_func_uint8_t_u_s((*g_367), l_2510)), 8))), ((((l_2456 = (safe_mul_func_int8_t_s_s((((safe_mod_func_int32_t_s_s(p_7, ((((((~((*l_3038) = ((((((((safe_lshift_func_int16_t_s_u((((l_2459 = (p_7 , ((*l_2416) |= (g_3020 != ((((*l_2407) |= (safe_rshift_func_uint8_t_u_s((safe_mul_func_uint8_t_u_u((g_455++), (safe_sub_func_int8_t_s_s(l_2459, (l_3033 && p_7))))), l_3034))) , 0xBC7DDAAFL) , l_3035[1][2][0]))))) & 8UL) && (*l_2768)), (*g_1317))) ^ (-1L)) && 65527UL) || 0UL) && 0x80DAD1963ED3243DLL) ^ (-5L)) == g_234) || p_7))) == p_7) , p_7) >= 0x9F26L) | l_3039) | p_7))) , p_7) ^ (-9L)), (*g_1791)))) ^ 0xF4L) || l_3040) ^ p_7)));
                    for (l_2455 = 2; (l_2455 >= 0); l_2455 -= 1)
                    { /* block id: 1442 */
                        l_3041[1][5] = ((*g_1010) &= (-2L));
                    }
                }
            }
            for (l_2985 = 0; (l_2985 <= 2); l_2985 += 1)
            { /* block id: 1450 */
                int8_t l_3065 = (-8L);
                uint8_t *l_3066 = &l_2881;
                int32_t l_3071 = 0x5E1BE30CL;
                union U0 *l_3072 = &g_2284;
                union U0 ***l_3079[5];
                uint8_t l_3086 = 0x03L;
                int32_t l_3091 = 0x09C7094EL;
                int32_t l_3123[10] = {0x4659C929L,(-1L),0x4659C929L,(-1L),0x4659C929L,(-1L),0x4659C929L,(-1L),0x4659C929L,(-1L)};
                int i;
                for (i = 0; i < 5; i++)
                    l_3079[i] = &g_742;
                if ((safe_div_func_int16_t_s_s(((safe_unary_minus_func_int32_t_s((((*l_2768) > ((safe_mod_func_uint16_t_u_u(((safe_add_func_uint16_t_u_u((((*l_2867) , (safe_div_func_int64_t_s_s((safe_rshift_func_uint8_t_u_s(((l_3053 < (~(((*g_1317) > (safe_rshift_func_int8_t_s_s(3L, ((*p_8) = (l_3071 |= (((-1L) >= l_2909[4][0]) || (safe_rshift_func_int16_t_s_u((!(safe_sub_func_uint8_t_u_u(((safe_sub_func_uint8_t_u_u((safe_unary_minus_func_uint16_t_u(p_7)), ((*l_3066)++))) , (safe_div_func_uint8_t_u_u(p_7, 249UL))), (**g_123)))), 10)))))))) && 1L))) ^ p_7), 6)), 0x751FD2F95FF86248LL))) != (*g_1791)), p_7)) && 0x9804FCFDL), p_7)) < p_7)) | (*l_2768)))) ^ p_7), (*g_1317))))
                { /* block id: 1454 */
                    uint32_t l_3085 = 0xB6439A96L;
                    (*g_742) = l_3072;
                    if (p_7)
                    { /* block id: 1456 */
                        union U0 ***l_3081[2];
                        union U0 ****l_3080 = &l_3081[1];
                        int i;
                        for (i = 0; i < 2; i++)
                            l_3081[i] = (void*)0;
                        if (l_3065)
                            break;
                        (*g_1998) = (void*)0;
                        p_7 = (safe_div_func_uint64_t_u_u((l_3085 ^= (safe_sub_func_int32_t_s_s(((safe_lshift_func_uint8_t_u_s(p_7, 5)) < ((l_3071 ^ (((p_7 < (l_3079[1] == ((*l_3080) = ((*g_1930) = (*g_1930))))) | ((void*)0 != &g_1181)) >= g_3082)) <= (safe_mod_func_int64_t_s_s((p_8 != p_8), l_3071)))), g_455))), l_3086));
                    }
                    else
                    { /* block id: 1463 */
                        uint8_t l_3087 = 0UL;
                        uint64_t l_3092[5] = {1UL,1UL,1UL,1UL,1UL};
                        int i;
                        l_3087++;
                        (*g_1360) = l_3090;
                        l_3092[0]++;
                    }
                }
                else
                { /* block id: 1468 */
                    int64_t *l_3114[7][7][4] = {{{&g_807,&g_807,(void*)0,&l_3033},{(void*)0,&g_2247,(void*)0,&g_807},{(void*)0,&g_807,(void*)0,(void*)0},{(void*)0,&g_807,(void*)0,&g_807},{&g_807,&g_807,&g_2247,(void*)0},{&g_2247,(void*)0,&g_2247,&g_807},{&g_807,(void*)0,&g_807,&g_807}},{{&l_3033,&l_3033,&l_3033,&g_807},{(void*)0,&g_46,&l_3033,&g_2247},{&g_807,&g_807,&g_2247,&l_3033},{&l_3033,&g_807,&g_807,&g_2247},{&g_807,&g_46,(void*)0,&g_807},{&g_46,&l_3033,(void*)0,&g_807},{&g_2247,(void*)0,&g_921,&g_807}},{{(void*)0,(void*)0,&g_807,(void*)0},{&l_3033,&g_807,&g_807,&g_807},{&g_46,&g_807,&l_3033,(void*)0},{(void*)0,&g_807,&g_46,&g_807},{(void*)0,&g_2247,&l_3033,&l_3033},{&g_46,&g_807,&g_807,&g_46},{&l_3033,(void*)0,&g_807,(void*)0}},{{(void*)0,&g_807,(void*)0,&g_46},{(void*)0,(void*)0,(void*)0,(void*)0},{&g_807,&g_46,&g_807,&g_807},{&g_921,&g_807,(void*)0,&l_3033},{&l_3033,(void*)0,(void*)0,&l_3033},{&g_46,&g_807,&g_2247,&g_807},{&g_2247,&g_46,&l_3033,(void*)0}},{{&g_46,(void*)0,&g_2247,&g_46},{(void*)0,&g_807,&g_46,(void*)0},{(void*)0,&g_2247,(void*)0,&g_807},{&l_3033,(void*)0,&g_2247,&l_3033},{&l_3033,&g_46,&g_46,(void*)0},{&g_807,(void*)0,&g_46,&l_3033},{&l_3033,&l_3033,&g_2247,&g_921}},{{&l_3033,&g_46,(void*)0,(void*)0},{(void*)0,(void*)0,&g_46,&l_3033},{(void*)0,&g_807,&g_2247,&g_2247},{&g_46,&g_46,&l_3033,&g_46},{&g_2247,&g_807,&g_2247,&g_46},{&g_46,&g_921,(void*)0,&g_2247},{&l_3033,&g_921,(void*)0,&g_46}},{{&g_921,&g_807,&g_807,&g_46},{&g_807,&g_46,(void*)0,&g_2247},{(void*)0,&g_807,(void*)0,&l_3033},{(void*)0,(void*)0,&l_3033,(void*)0},{&g_2247,&g_46,&l_3033,&g_921},{&l_3033,&l_3033,&g_807,&l_3033},{(void*)0,(void*)0,&g_807,(void*)0}}};
                    int32_t l_3115 = 5L;
                    uint16_t l_3116 = 1UL;
                    int i, j, k;
                    p_7 = ((*g_1010) &= ((safe_mul_func_int8_t_s_s(((safe_rshift_func_int16_t_s_s(0x3D92L, 5)) == (((safe_mul_func_uint8_t_u_u((safe_add_func_uint64_t_u_u((((safe_rshift_func_uint8_t_u_u((safe_rshift_func_int16_t_s_s((l_3091 &= (*l_2768)), 5)), 7)) != ((((safe_mul_func_int8_t_s_s(((*l_2768) || ((p_7 || ((safe_sub_func_uint16_t_u_u(p_7, ((0x885C5599A1E71633LL ^ ((safe_mod_func_uint16_t_u_u((**g_1316), 0x099BL)) , (g_921 = (g_3113 , l_3086)))) , p_7))) & l_3065)) < g_2809.f1)), (-5L))) <= l_3115) != l_2452[0][8][0]) && l_2460)) , (*g_2355)), 0xCB126E72CB91F5B7LL)), (*l_2768))) <= (*p_8)) ^ l_3116)), (*l_2768))) != l_3086));
                    (*g_1998) = &l_2514;
                }
                if ((safe_add_func_int64_t_s_s((((***g_3020) = (**g_3021)) != (void*)0), 0x8A843AF8742A73D8LL)))
                { /* block id: 1476 */
                    int8_t l_3119 = 0L;
                    int32_t l_3120 = 0x3BFB652BL;
                    int32_t l_3121 = 0L;
                    int32_t l_3122 = 0x52D830F8L;
                    uint8_t l_3125[5] = {0x40L,0x40L,0x40L,0x40L,0x40L};
                    int i;
                    (*g_1998) = &l_2459;
                    l_3125[1]--;
                }
                else
                { /* block id: 1479 */
                    int32_t ****l_3131[2];
                    int32_t *****l_3132 = &l_3131[0];
                    int i;
                    for (i = 0; i < 2; i++)
                        l_3131[i] = (void*)0;
                    p_7 = ((((p_7 ^ (((safe_add_func_uint16_t_u_u(((l_3130 = (void*)0) == ((*l_3132) = l_3131[0])), ((void*)0 == &l_2992[1][4]))) < (!((((*l_2407) |= (safe_div_func_uint64_t_u_u((0L || ((safe_div_func_uint32_t_u_u(((**g_1316) <= ((safe_mul_func_uint16_t_u_u(l_3123[4], g_993.f1)) != (*g_1791))), p_7)) || p_7)), (*l_2768)))) ^ 0xFD25L) || p_7))) == 0x91L)) || p_7) , (void*)0) == l_3140);
                }
                return (*g_367);
            }
            for (l_3053 = 0; (l_3053 <= 2); l_3053 += 1)
            { /* block id: 1489 */
                uint32_t l_3142[4] = {4294967295UL,4294967295UL,4294967295UL,4294967295UL};
                int32_t l_3145 = 1L;
                uint64_t l_3164[3];
                uint32_t l_3171 = 18446744073709551614UL;
                uint8_t **l_3196 = &l_2865;
                uint8_t ***l_3197 = &l_3196;
                uint32_t *l_3208 = (void*)0;
                uint32_t *l_3209[8][9][1] = {{{&l_3142[0]},{(void*)0},{&l_3041[0][3]},{&l_3041[0][3]},{(void*)0},{&l_3142[0]},{&l_2719},{(void*)0},{&l_2719}},{{&l_3142[0]},{(void*)0},{&l_3041[0][3]},{&l_3041[0][3]},{(void*)0},{&l_3142[0]},{&l_2719},{(void*)0},{&l_2719}},{{&l_3142[0]},{(void*)0},{&l_3041[0][3]},{&l_3041[0][3]},{(void*)0},{&l_3142[0]},{&l_2719},{(void*)0},{&l_2719}},{{&l_3142[0]},{(void*)0},{&l_3041[0][3]},{&l_3041[0][3]},{(void*)0},{&l_3142[0]},{&l_2719},{(void*)0},{&l_2719}},{{&l_3142[0]},{(void*)0},{&l_3041[0][3]},{&l_3041[0][3]},{(void*)0},{&l_3142[0]},{&l_2719},{(void*)0},{&l_2719}},{{&l_3142[0]},{(void*)0},{&l_3041[0][3]},{&l_3041[0][3]},{(void*)0},{&l_3142[0]},{&l_2719},{(void*)0},{&l_2719}},{{&l_3142[0]},{(void*)0},{&l_3041[0][3]},{&l_3041[0][3]},{(void*)0},{&l_3142[0]},{&l_2719},{(void*)0},{&l_2719}},{{&l_3142[0]},{(void*)0},{&l_3041[0][3]},{&l_3041[0][3]},{(void*)0},{(void*)0},{&l_2463},{&l_2719},{&l_2463}}};
                const uint64_t **l_3210[2];
                uint32_t l_3225 = 18446744073709551608UL;
                int i, j, k;
                for (i = 0; i < 3; i++)
                    l_3164[i] = 1UL;
                for (i = 0; i < 2; i++)
                    l_3210[i] = (void*)0;
                if (l_3142[2])
                { /* block id: 1490 */
                    union U0 ***** const l_3143 = (void*)0;
                    int32_t l_3158[7][6] = {{0x14218FD7L,0xDD673D86L,0xDD673D86L,0x14218FD7L,0xDD673D86L,0xDD673D86L},{0x14218FD7L,0xDD673D86L,0xDD673D86L,0x14218FD7L,0xDD673D86L,0xDD673D86L},{0x14218FD7L,0xDD673D86L,0xDD673D86L,0x14218FD7L,0xDD673D86L,0xDD673D86L},{0x14218FD7L,0xDD673D86L,0xDD673D86L,0x14218FD7L,0xDD673D86L,0xDD673D86L},{0x14218FD7L,0xDD673D86L,0xDD673D86L,0x14218FD7L,0xDD673D86L,0xDD673D86L},{0x14218FD7L,0xDD673D86L,0xDD673D86L,0x14218FD7L,0xDD673D86L,0xDD673D86L},{0x14218FD7L,0xDD673D86L,0xDD673D86L,0x14218FD7L,0xDD673D86L,0xDD673D86L}};
                    int i, j;
                    (*g_1998) = &p_7;
                    if (l_2459)
                    { /* block id: 1492 */
                        l_3144 = l_3143;
                    }
                    else
                    { /* block id: 1494 */
                        (*g_1998) = &l_2514;
                        (*g_140) &= (l_3145 |= 0x24A1E700L);
                        (*g_1010) |= (safe_unary_minus_func_uint8_t_u((p_7 || (l_2881 >= ((safe_add_func_int64_t_s_s(p_7, (0x5AL | (safe_mul_func_uint8_t_u_u(0UL, l_3142[1]))))) != ((((**g_1930) == (void*)0) != ((((safe_lshift_func_int16_t_s_s(((!(((safe_mul_func_uint16_t_u_u(l_2915, 1L)) >= p_7) <= p_7)) , l_3158[1][4]), 15)) , 0L) <= l_3145) > 1L)) != l_2761[1]))))));
                        if (l_2459)
                            goto lbl_2960;
                    }
                    return (*g_1791);
                }
                else
                { /* block id: 1502 */
                    int64_t *l_3163[3][7][8] = {{{&g_807,&g_2247,(void*)0,(void*)0,&l_3033,&l_3033,&g_807,&g_807},{&g_807,&l_3033,&g_2247,&l_3033,&g_921,&g_2247,&g_46,&g_2247},{&g_2247,&g_921,&g_921,&g_921,&g_2247,&g_921,&g_46,(void*)0},{&g_807,&l_3033,&g_807,(void*)0,&g_921,&g_921,&g_807,&g_921},{&g_921,&g_46,&g_807,&g_807,&g_921,&g_807,&g_46,(void*)0},{&g_921,(void*)0,&g_921,(void*)0,(void*)0,&g_46,&g_46,(void*)0},{&l_3033,&g_2247,&g_2247,&l_3033,(void*)0,&g_46,&g_807,&g_921}},{{&g_2247,&l_3033,(void*)0,&g_2247,&g_921,&g_807,&g_921,&g_921},{&g_46,&l_3033,&g_921,&g_921,(void*)0,&g_46,&g_921,&g_2247},{&l_3033,&g_2247,&l_3033,&g_921,&g_2247,&g_46,&g_2247,&g_921},{&g_921,(void*)0,&g_921,&g_921,&g_807,&g_807,&l_3033,&l_3033},{(void*)0,&g_46,&g_921,&g_921,&g_46,&g_921,&g_807,&g_921},{(void*)0,&l_3033,(void*)0,&g_2247,&g_807,&g_921,&g_921,&g_2247},{&g_921,&g_921,(void*)0,&l_3033,&g_2247,&g_2247,&l_3033,(void*)0}},{{&l_3033,&l_3033,&g_807,&g_46,(void*)0,&l_3033,&g_921,&g_807},{&g_46,&g_2247,&l_3033,&g_921,&g_921,&g_807,&g_2247,&g_807},{&g_2247,&g_921,&g_2247,&g_46,(void*)0,&g_921,&g_807,(void*)0},{&l_3033,&g_2247,(void*)0,&l_3033,(void*)0,&l_3033,(void*)0,&g_2247},{&g_921,&g_807,&g_2247,(void*)0,&g_921,(void*)0,(void*)0,&g_921},{&g_2247,(void*)0,&g_46,&g_921,&g_46,&l_3033,(void*)0,(void*)0},{&g_807,&g_921,&g_2247,(void*)0,&l_3033,&g_2247,&g_921,(void*)0}}};
                    int i, j, k;
                    (*g_1998) = (void*)0;
                    (*l_2768) = (((safe_rshift_func_int8_t_s_s((*p_8), 3)) ^ 0L) , ((safe_mod_func_int8_t_s_s((*p_8), ((l_3164[0] &= p_7) || (safe_div_func_uint8_t_u_u((((p_7 > (((void*)0 != &g_741) && l_3142[2])) != p_7) == (**g_1316)), 1UL))))) ^ l_2761[1]));
                    for (l_2510 = 0; (l_2510 <= 3); l_2510 += 1)
                    { /* block id: 1508 */
                        uint32_t *l_3175 = &l_2766[1][1];
                        int32_t l_3182 = 0xCA21F823L;
                        int64_t l_3187[4][5] = {{6L,0L,0xF9F74F1AA543F864LL,0L,6L},{6L,0L,0xF9F74F1AA543F864LL,0L,6L},{6L,0L,0xF9F74F1AA543F864LL,0L,6L},{6L,0L,0xF9F74F1AA543F864LL,0L,6L}};
                        union U0 *l_3188[3];
                        int i, j;
                        for (i = 0; i < 3; i++)
                            l_3188[i] = &g_2024;
                        if (g_3082)
                            goto lbl_2960;
                        l_3188[1] = ((((safe_mod_func_uint32_t_u_u((*l_2768), (safe_add_func_uint64_t_u_u((l_3171 , 0x973B21D3E80B25D8LL), (!((((safe_div_func_int16_t_s_s((((*g_1740) = (&l_2788[0] != (void*)0)) >= ((++(*l_3175)) >= l_3142[0])), (((((safe_div_func_int8_t_s_s((l_2456 |= (safe_div_func_int16_t_s_s(((l_3182 = ((*g_1010) ^= (-1L))) && (safe_sub_func_int32_t_s_s((safe_lshift_func_uint8_t_u_s((p_7 ^ 1UL), 0)), p_7))), p_7))), l_2460)) | (*p_8)) , (**g_2642)) | p_7) | l_3187[0][4]))) != 1L) & 0L) || l_3187[0][1])))))) ^ (*p_8)) < (-1L)) , (void*)0);
                    }
                }
                (*l_2768) = ((*g_1010) = ((((l_2761[1] > (safe_rshift_func_uint8_t_u_u((safe_sub_func_uint16_t_u_u(((((((l_3195 == ((*l_3197) = l_3196)) , &l_3164[0]) == (void*)0) <= 0UL) >= ((*g_1317) = (((safe_mod_func_uint8_t_u_u((*l_2768), (safe_rshift_func_uint16_t_u_s((safe_div_func_int64_t_s_s(((*g_2643) != (g_711.f4 = (l_3145 = (((safe_mul_func_int8_t_s_s((*p_8), 0xC8L)) ^ p_7) < p_7)))), 1L)), 15)))) & p_7) , 0xFAB2L))) > (*p_8)), p_7)), p_7))) == g_401) , (**g_2785)) != l_3210[1]));
                for (l_2415 = 0; (l_2415 <= 2); l_2415 += 1)
                { /* block id: 1526 */
                    int64_t l_3217 = 0L;
                    union U0 ***l_3219 = &g_742;
                    for (l_3033 = 7; (l_3033 >= 0); l_3033 -= 1)
                    { /* block id: 1529 */
                        union U0 ****l_3220 = &g_741;
                        union U0 ****l_3221 = &l_3219;
                        uint32_t * const *l_3224 = &l_3209[7][6][0];
                        int i, j, k;
                        (*l_2768) = (p_7 != (safe_lshift_func_int16_t_s_s(l_3053, (p_7 , (safe_add_func_uint64_t_u_u(((safe_add_func_int8_t_s_s(((((*p_8) , l_3217) , l_3218) != ((*l_3221) = ((*l_3220) = l_3219))), ((((safe_add_func_uint16_t_u_u(((l_3145 = (((l_2452[(l_3053 + 3)][g_1598][l_3053] ^= (***g_3021)) , (&g_2643 == l_3224)) <= (**g_1316))) , (*l_2768)), p_7)) ^ l_3225) >= p_7) , l_3171))) && 0x0FEC34B5L), 0x41A4AF3D601D3B20LL))))));
                        l_2894[1] = &p_7;
                        l_3227 = &l_2407;
                        (*g_1998) = &p_7;
                    }
                    (*g_1010) |= p_7;
                }
            }
            for (g_1689 = 0; (g_1689 <= 2); g_1689 += 1)
            { /* block id: 1544 */
                uint32_t l_3243 = 0xB45F3BC1L;
                int32_t l_3247 = 1L;
                for (l_2415 = 9; (l_2415 >= 0); l_2415 -= 1)
                { /* block id: 1547 */
                    int i, j, k;
                    l_2894[(g_1598 + 3)] = &p_7;
                    g_2[(g_1689 + 3)][g_1598] = ((safe_sub_func_uint64_t_u_u((safe_sub_func_int16_t_s_s((&g_2786 != (l_2997 = (void*)0)), (l_2889[g_1689][g_1598][g_1598] && ((safe_lshift_func_uint8_t_u_s(p_7, 0)) ^ (((*l_2867) , p_7) <= ((*p_8) >= ((safe_lshift_func_int16_t_s_s(((((safe_div_func_int64_t_s_s((((safe_lshift_func_int16_t_s_s(((*l_2416) = ((safe_mul_func_uint16_t_u_u((*g_1317), ((l_3242[2] != (void*)0) < 0xE764B52E70EEA2F1LL))) | (*l_2768))), 6)) <= g_2247) , 0xF279069257637426LL), (*l_2768))) && g_1404.f1) <= 0x0E220D0B2226C30BLL) != l_2909[5][0]), p_7)) <= 3UL))))))), (*l_2768))) == (-10L));
                }
                --l_3243;
                (*g_1998) = (void*)0;
                for (g_2180 = 0; (g_2180 <= 1); g_2180 += 1)
                { /* block id: 1557 */
                    return p_7;
                }
                for (l_2461 = 0; (l_2461 <= 9); l_2461 += 1)
                { /* block id: 1562 */
                    union U0 **l_3246 = &g_743;
                    int32_t l_3248 = (-1L);
                    l_3246 = ((*l_2768) , ((*g_741) = (**g_1930)));
                    (*l_2768) &= 1L;
                    if ((**g_176))
                        continue;
                    --l_3249;
                }
            }
        }
    }
    for (g_173 = 0; (g_173 >= 13); g_173++)
    { /* block id: 1574 */
        const int8_t l_3264 = 0xD1L;
        int32_t *l_3308 = (void*)0;
        uint64_t *****l_3310[2][4][3] = {{{&l_2800,&l_2800,&l_2800},{(void*)0,(void*)0,(void*)0},{&l_2800,&l_2800,&l_2800},{(void*)0,(void*)0,(void*)0}},{{&l_2800,&l_2800,&l_2800},{(void*)0,(void*)0,(void*)0},{&l_2800,&l_2800,&l_2800},{(void*)0,(void*)0,(void*)0}}};
        const union U0 *l_3329 = &g_993;
        const union U0 **l_3328 = &l_3329;
        const union U0 ***l_3327 = &l_3328;
        const union U0 ****l_3326 = &l_3327;
        const union U0 *****l_3325 = &l_3326;
        const int8_t l_3357[4] = {(-7L),(-7L),(-7L),(-7L)};
        int32_t l_3373[8][1][2] = {{{0x522AC62EL,(-10L)}},{{0xE6904351L,9L}},{{9L,0xE6904351L}},{{(-10L),0x522AC62EL}},{{(-10L),0xE6904351L}},{{9L,9L}},{{0xE6904351L,(-10L)}},{{0x522AC62EL,(-10L)}}};
        uint32_t l_3435 = 0UL;
        uint8_t l_3448 = 1UL;
        int64_t l_3462[1];
        int64_t *l_3463[6] = {&g_2247,&g_2247,&g_2247,&g_2247,&g_2247,&g_2247};
        uint32_t *l_3472 = &g_729;
        int32_t *l_3473 = &l_2461;
        int8_t l_3516[9] = {0xAEL,(-6L),0xAEL,0xAEL,(-6L),0xAEL,0xAEL,(-6L),0xAEL};
        uint8_t * const *l_3586 = (void*)0;
        uint32_t *l_3602 = &g_2763;
        uint32_t **l_3601 = &l_3602;
        uint64_t l_3670 = 0x0E8ABBD7CB24C271LL;
        int32_t *l_3678 = (void*)0;
        int i, j, k;
        for (i = 0; i < 1; i++)
            l_3462[i] = 0xD784CF28D240CDA9LL;
        for (g_25 = 26; (g_25 > 20); g_25--)
        { /* block id: 1577 */
            uint64_t ****l_3260 = &l_2788[0];
            int32_t l_3265 = (-3L);
            int32_t l_3372 = 0x910D9EBAL;
            int32_t l_3374 = 0x3E63410FL;
            int32_t l_3375[2][2] = {{0x3742AB0DL,0x3742AB0DL},{0x3742AB0DL,0x3742AB0DL}};
            union U0 *l_3382 = &g_1404;
            int i, j;
            (*g_140) ^= (safe_sub_func_uint32_t_u_u(4294967295UL, (p_7 ^ (*l_2768))));
            for (g_807 = 4; (g_807 >= 1); g_807 -= 1)
            { /* block id: 1581 */
                uint32_t *l_3263 = &l_2766[3][2];
                uint64_t l_3279 = 0x5980D7D675A57953LL;
                int8_t **l_3306 = &g_1667;
                int32_t l_3324 = 0x6AAD328CL;
                const union U0 ***** const l_3337 = &l_3326;
                uint64_t *l_3366 = (void*)0;
                int32_t l_3376 = 0L;
                int32_t l_3377[7][4] = {{1L,0xEB76ECF8L,0L,0xEB76ECF8L},{0x183B81F4L,0xA468F70CL,0L,0L},{0xEB76ECF8L,0xA468F70CL,0xA468F70CL,0xEB76ECF8L},{0xA468F70CL,0xEB76ECF8L,0x183B81F4L,1L},{0xA468F70CL,0x183B81F4L,0xA468F70CL,0L},{0xEB76ECF8L,1L,0L,0L},{0x183B81F4L,0x183B81F4L,0L,1L}};
                int i, j;
            }
            if ((**g_176))
                continue;
            if ((((**l_3218) = l_3382) == (void*)0))
            { /* block id: 1643 */
                int32_t *l_3385[10] = {&l_3373[3][0][0],&l_3373[3][0][0],&l_3373[3][0][0],&l_3373[3][0][0],&l_3373[3][0][0],&l_3373[3][0][0],&l_3373[3][0][0],&l_3373[3][0][0],&l_3373[3][0][0],&l_3373[3][0][0]};
                int i;
                for (l_2415 = (-7); (l_2415 == (-7)); l_2415 = safe_add_func_int16_t_s_s(l_2415, 1))
                { /* block id: 1646 */
                    (*g_1998) = (l_3385[1] = (*g_1108));
                    if ((*l_2768))
                        continue;
                }
            }
            else
            { /* block id: 1651 */
                for (l_2719 = 15; (l_2719 <= 47); ++l_2719)
                { /* block id: 1654 */
                    (*g_1010) |= l_3373[1][0][1];
                }
            }
        }
        for (g_1533 = 0; (g_1533 <= 2); g_1533 += 1)
        { /* block id: 1661 */
            int32_t *l_3388 = &l_2692[0];
            int32_t *l_3389 = &g_250[2][8];
            int32_t *l_3390 = &g_1708;
            int32_t *l_3391 = &l_3373[3][0][0];
            int32_t *l_3392 = (void*)0;
            int32_t *l_3393 = (void*)0;
            int32_t *l_3394 = &l_2692[0];
            int32_t *l_3395 = &g_250[2][8];
            int32_t *l_3396 = &g_250[0][8];
            int32_t *l_3397 = &l_3373[7][0][1];
            int32_t *l_3398 = &l_2461;
            int32_t *l_3399 = (void*)0;
            int32_t *l_3400 = &g_250[2][5];
            int32_t *l_3401[1][4][4] = {{{&g_49,&g_1601[4][4],&g_49,&g_49},{&g_1601[4][4],&g_1601[4][4],&l_3373[0][0][1],&g_1601[4][4]},{&g_1601[4][4],&g_49,&g_49,&g_1601[4][4]},{&g_49,&g_1601[4][4],&g_49,&g_49}}};
            uint64_t l_3403 = 18446744073709551606UL;
            int i, j, k;
            l_3403--;
            for (l_3033 = 2; (l_3033 >= 0); l_3033 -= 1)
            { /* block id: 1665 */
                int8_t l_3414 = 0xACL;
                int32_t l_3430 = 0x700D3E53L;
                if (((*l_3398) |= ((*l_3389) = ((safe_add_func_int16_t_s_s((!(safe_rshift_func_int16_t_s_u(((safe_rshift_func_int16_t_s_s(((*l_2416) |= (!l_3414)), 10)) | (*l_2768)), p_7))), (l_3373[4][0][1] <= 1L))) && ((((((*l_2416) = (l_3373[4][0][0] <= ((void*)0 != (*l_2612)))) || ((((((*g_1740) = ((safe_lshift_func_uint16_t_u_u(0xF7A3L, 5)) >= l_3414)) ^ (-1L)) >= 0x20FC17619D53E9F9LL) || p_7) , l_3414)) | p_7) > l_3373[3][0][0]) || l_3414)))))
                { /* block id: 1671 */
                    int i, j;
                    l_3430 = ((*g_1317) , (safe_mod_func_uint16_t_u_u((((p_7 >= (&g_1095[(g_1533 + 1)][l_3033] != (***g_3331))) != ((safe_rshift_func_int8_t_s_u(((safe_mul_func_uint16_t_u_u((**g_1316), (safe_rshift_func_int16_t_s_u((p_7 , (safe_div_func_uint32_t_u_u(0xB0A86A07L, l_3429))), 11)))) , ((**g_779) = ((p_7 < 0x1221L) & 0xDEFBA95FAB252703LL))), (*g_1791))) > p_7)) , g_1095[(g_1533 + 1)][l_3033].f1), l_3357[0])));
                    for (g_2180 = 0; (g_2180 <= 2); g_2180 += 1)
                    { /* block id: 1676 */
                        int32_t *l_3431 = (void*)0;
                        l_3430 ^= p_7;
                        if ((**g_176))
                            continue;
                        (*g_1998) = l_3431;
                    }
                }
                else
                { /* block id: 1681 */
                    int32_t *l_3432 = &l_3373[6][0][1];
                    (*l_3397) = ((l_3432 != ((*g_1998) = &p_7)) , (-5L));
                }
                p_7 = (safe_mul_func_int8_t_s_s(4L, (l_3435 = l_3414)));
                for (g_1036 = 0; (g_1036 <= 0); g_1036 += 1)
                { /* block id: 1689 */
                    int32_t *l_3436 = &l_2692[0];
                    int64_t *l_3437 = &g_921;
                    int i, j;
                    (*g_1998) = l_3436;
                    (*l_2768) = (((((*l_3437) |= (*l_2768)) < (safe_rshift_func_uint8_t_u_u(p_7, (safe_sub_func_int32_t_s_s((safe_add_func_int32_t_s_s((*l_3436), (**g_217))), (safe_div_func_uint32_t_u_u((&p_8 == (void*)0), (*l_2768)))))))) & (*l_2768)) , ((safe_rshift_func_int8_t_s_s((*l_2768), 2)) > p_7));
                }
            }
            ++l_3448;
        }
        if (((*l_3473) ^= ((*g_1010) = ((safe_rshift_func_int8_t_s_u((p_7 == (safe_mod_func_int64_t_s_s((l_3373[3][0][0] = ((safe_lshift_func_int16_t_s_s(((((*l_3472) = (((safe_rshift_func_uint8_t_u_s(((*g_1791) |= ((*p_8) == (safe_unary_minus_func_uint64_t_u(0xE5015D12BCA14CD0LL)))), (**g_779))) == ((safe_sub_func_int64_t_s_s((g_807 |= l_3462[0]), (0UL == (safe_sub_func_int8_t_s_s(0x4AL, p_7))))) , (((((((*l_2768) &= (safe_rshift_func_int16_t_s_u((safe_unary_minus_func_int64_t_s((safe_lshift_func_int8_t_s_u((*p_8), 5)))), p_7))) ^ 0x10L) & 1L) | 0L) , l_3471) != &l_3462[0]))) <= (**g_1055))) , p_7) < (-7L)), 1)) < 4294967295UL)), p_7))), 1)) == (*g_1740)))))
        { /* block id: 1704 */
            int16_t l_3475 = 0x81AFL;
            uint32_t * const ****l_3481 = (void*)0;
            int32_t l_3517 = 1L;
            (*l_3473) |= (p_7 | (1L > (+((*g_140) &= l_3475))));
            if ((safe_div_func_int8_t_s_s((safe_unary_minus_func_uint32_t_u((safe_div_func_int64_t_s_s((l_3481 == (g_3482[1] = g_3482[3])), (*l_2768))))), (l_3517 &= ((((safe_mul_func_int16_t_s_s(((safe_rshift_func_uint16_t_u_s((+(*l_3473)), 7)) != (safe_sub_func_uint16_t_u_u(((0x28C04BACL & (safe_lshift_func_int8_t_s_s((safe_rshift_func_int8_t_s_s(((((~(safe_add_func_uint64_t_u_u((safe_add_func_uint64_t_u_u((safe_sub_func_int16_t_s_s(0x6349L, l_3475)), ((safe_rshift_func_uint16_t_u_s(((!((safe_mul_func_uint8_t_u_u((safe_add_func_uint8_t_u_u((safe_add_func_int16_t_s_s((safe_lshift_func_uint8_t_u_s((((safe_mul_func_uint8_t_u_u(((((*g_1010) = (**g_326)) >= 0xF418756EL) | p_7), p_7)) , p_7) <= p_7), 0)), (-1L))), 0xB3L)), (*l_2768))) , (*g_2643))) != p_7), (*l_2768))) || p_7))), l_3475))) || p_7) && (*g_1317)) & 1UL), 7)), l_3516[5]))) && 0x4469L), (-7L)))), 0x7336L)) < 0x38F5L) | (*l_3473)) == p_7)))))
            { /* block id: 1710 */
                int8_t ***l_3526 = &g_123;
                int32_t l_3532[7][2] = {{2L,2L},{(-3L),2L},{2L,(-3L)},{2L,2L},{(-3L),2L},{2L,(-3L)},{2L,2L}};
                int i, j;
                for (l_3429 = (-20); (l_3429 > 5); l_3429 = safe_add_func_int32_t_s_s(l_3429, 8))
                { /* block id: 1713 */
                    int8_t ***l_3525[9] = {&g_123,&l_3273,&g_123,&g_123,&l_3273,&g_123,&g_123,&l_3273,&g_123};
                    int8_t ****l_3524[2];
                    int32_t l_3527 = 0xABD82131L;
                    int i;
                    for (i = 0; i < 2; i++)
                        l_3524[i] = &l_3525[0];
                    (*g_1998) = (*g_1055);
                    (*g_1998) = (void*)0;
                    (*l_3473) &= (safe_mul_func_int8_t_s_s((((**g_1113) > (((g_1601[4][4] | ((*g_1181) != (*g_2471))) ^ ((l_3526 = &g_123) != &g_123)) , l_3527)) & ((*l_2768) < ((safe_mod_func_int16_t_s_s(((*l_2416) = ((*g_1791) != (*g_1791))), 5UL)) == l_3532[0][0]))), 0x75L));
                }
            }
            else
            { /* block id: 1720 */
                return p_7;
            }
        }
        else
        { /* block id: 1723 */
            uint8_t l_3551 = 4UL;
            int32_t l_3559[4];
            uint32_t l_3589 = 2UL;
            const uint32_t *l_3600[6][8] = {{&l_3589,&g_2763,&l_2463,&l_2463,&g_2763,&l_3589,(void*)0,&g_2763},{&l_3589,(void*)0,&g_1533,&l_3589,&g_1533,(void*)0,&l_3589,(void*)0},{&l_2463,(void*)0,&l_3589,&l_3589,&l_3589,&l_3589,(void*)0,&l_2463},{(void*)0,&l_3589,(void*)0,&g_1533,&l_3589,&g_1533,(void*)0,&l_3589},{&l_2463,(void*)0,(void*)0,&l_2463,&g_1533,&g_1533,&l_2463,(void*)0},{&l_3589,&l_3589,&l_3589,(void*)0,&l_2463,&l_3589,&l_2463,(void*)0}};
            const uint32_t **l_3599 = &l_3600[2][2];
            int i, j;
            for (i = 0; i < 4; i++)
                l_3559[i] = 0xDD127FC5L;
            (*g_1998) = &l_2415;
            p_7 = (*l_2768);
            for (g_2495 = 2; (g_2495 >= 0); g_2495 -= 1)
            { /* block id: 1728 */
                uint16_t l_3550 = 3UL;
                int32_t l_3561 = 0x811EF56FL;
                int32_t l_3562 = 0xFC0C377CL;
                int32_t l_3563 = 0xD4CA4A36L;
                int32_t l_3564 = 5L;
                int32_t l_3565[9][1][5] = {{{1L,1L,1L,1L,1L}},{{0x04083571L,0x04083571L,0x04083571L,0x04083571L,0x04083571L}},{{1L,1L,1L,1L,1L}},{{0x04083571L,0x04083571L,0x04083571L,0x04083571L,0x04083571L}},{{1L,1L,1L,1L,1L}},{{0x04083571L,0x04083571L,0x04083571L,0x04083571L,0x04083571L}},{{1L,1L,1L,1L,1L}},{{0x04083571L,0x04083571L,0x04083571L,0x04083571L,0x04083571L}},{{1L,1L,1L,1L,1L}}};
                int32_t l_3567[6] = {0xAED7456CL,0x0378A195L,0xAED7456CL,0xAED7456CL,0x0378A195L,0xAED7456CL};
                uint16_t l_3572 = 0x19D9L;
                uint32_t l_3598 = 4294967287UL;
                uint64_t l_3607 = 0x3082B2EE33405D8CLL;
                uint16_t ***l_3613[2];
                int32_t ***l_3635 = &g_3022[2];
                int64_t l_3657 = 0xE112E36617D4D733LL;
                int8_t l_3690[6] = {0x11L,0x11L,0x11L,0x11L,0x11L,0x11L};
                int i, j, k;
                for (i = 0; i < 2; i++)
                    l_3613[i] = &g_1318;
            }
            (*g_140) &= (l_3472 != (void*)0);
        }
        if (p_7)
            continue;
    }
    return (*l_2768);
}


/* ------------------------------------------ */
/* 
 * reads : g_1598 g_170 g_250
 * writes: g_1598 g_170
 */
static int8_t  func_13(int32_t  p_14)
{ /* block id: 1143 */
    int32_t *l_2370 = (void*)0;
    int32_t *l_2371 = &g_250[2][8];
    int32_t *l_2372 = &g_49;
    int32_t *l_2373 = &g_1601[3][2];
    int32_t *l_2374[8];
    int64_t l_2375 = 0xCA77778C58470D05LL;
    int8_t l_2376 = 8L;
    uint32_t l_2377 = 0UL;
    int8_t l_2391 = 0x3EL;
    int i;
    for (i = 0; i < 8; i++)
        l_2374[i] = &g_1708;
    ++l_2377;
    for (g_1598 = 24; (g_1598 != 37); ++g_1598)
    { /* block id: 1147 */
        uint32_t l_2382 = 0xD81B8F4EL;
        l_2382++;
    }
    for (g_170 = (-20); (g_170 != 5); g_170 = safe_add_func_uint64_t_u_u(g_170, 5))
    { /* block id: 1152 */
        int8_t l_2387 = 0x25L;
        int32_t l_2388 = 0x999036C8L;
        int32_t l_2389 = 0x966B9FBCL;
        int32_t l_2390[9] = {0x5FE75C81L,0x5FE75C81L,0x5FE75C81L,0x5FE75C81L,0x5FE75C81L,0x5FE75C81L,0x5FE75C81L,0x5FE75C81L,0x5FE75C81L};
        uint32_t l_2392 = 4UL;
        int i;
        --l_2392;
        if (l_2390[1])
            break;
    }
    return (*l_2371);
}


/* ------------------------------------------ */
/* 
 * reads : g_2363 g_1010 g_49 g_176 g_140
 * writes: g_1790 g_49
 */
static int32_t  func_15(int64_t  p_16, uint32_t  p_17, uint64_t * p_18, uint64_t * const  p_19)
{ /* block id: 1139 */
    uint8_t l_2360 = 0x60L;
    uint8_t **l_2361[8] = {(void*)0,(void*)0,(void*)0,(void*)0,(void*)0,(void*)0,(void*)0,(void*)0};
    uint8_t ***l_2362 = &g_1790;
    int i;
    (*g_1010) |= (safe_lshift_func_uint8_t_u_u(((safe_div_func_int8_t_s_s(l_2360, l_2360)) && (((*l_2362) = l_2361[4]) == l_2361[4])), ((g_2363[7][3] , (0x20DD66B7L > l_2360)) != ((safe_mod_func_int16_t_s_s((safe_rshift_func_int16_t_s_u((safe_div_func_int16_t_s_s(l_2360, p_17)), p_17)), l_2360)) == 0x01D8774BL))));
    return (**g_176);
}


/* ------------------------------------------ */
/* 
 * reads : g_46 g_2 g_21 g_48 g_49
 * writes: g_46 g_49
 */
static int32_t  func_26(uint64_t * p_27, const int16_t  p_28, int8_t  p_29, int8_t * p_30, uint64_t * p_31)
{ /* block id: 7 */
    int64_t *l_44 = (void*)0;
    int64_t *l_45[1][10][2] = {{{&g_46,&g_46},{&g_46,&g_46},{&g_46,&g_46},{&g_46,&g_46},{&g_46,&g_46},{&g_46,&g_46},{&g_46,&g_46},{&g_46,&g_46},{&g_46,&g_46},{&g_46,&g_46}}};
    int32_t *l_52 = &g_49;
    int32_t *l_53 = &g_49;
    int32_t *l_54 = &g_49;
    int32_t *l_55 = &g_49;
    int32_t *l_56 = &g_49;
    int32_t *l_57 = &g_49;
    int32_t *l_58 = &g_49;
    int32_t *l_59 = (void*)0;
    int32_t *l_60 = &g_49;
    int32_t *l_61 = &g_49;
    int32_t *l_62 = &g_49;
    int32_t *l_63 = &g_49;
    int32_t *l_64 = &g_49;
    int32_t *l_65 = &g_49;
    int32_t l_66 = (-10L);
    int32_t l_67 = 0xED4B89D5L;
    int32_t *l_68 = &g_49;
    int32_t *l_69 = &l_66;
    int32_t l_70 = (-1L);
    int32_t *l_71 = (void*)0;
    int32_t *l_72[2];
    uint64_t l_73 = 0UL;
    int8_t l_78 = (-1L);
    uint64_t ***l_1865 = (void*)0;
    uint16_t l_1919 = 65530UL;
    uint32_t l_1925 = 4294967293UL;
    int8_t l_1962 = 0L;
    int32_t ***l_2033 = (void*)0;
    int16_t l_2057 = (-2L);
    uint64_t l_2062[4][5][3] = {{{1UL,1UL,1UL},{18446744073709551615UL,18446744073709551615UL,18446744073709551615UL},{1UL,1UL,1UL},{18446744073709551615UL,18446744073709551615UL,18446744073709551615UL},{1UL,1UL,1UL}},{{18446744073709551615UL,18446744073709551615UL,18446744073709551615UL},{1UL,1UL,1UL},{18446744073709551615UL,18446744073709551615UL,18446744073709551615UL},{1UL,1UL,1UL},{18446744073709551615UL,18446744073709551615UL,18446744073709551615UL}},{{1UL,1UL,1UL},{18446744073709551615UL,18446744073709551615UL,18446744073709551615UL},{1UL,1UL,1UL},{18446744073709551615UL,18446744073709551615UL,18446744073709551615UL},{1UL,1UL,1UL}},{{18446744073709551615UL,18446744073709551615UL,18446744073709551615UL},{1UL,1UL,1UL},{18446744073709551615UL,18446744073709551615UL,18446744073709551615UL},{1UL,1UL,1UL},{18446744073709551615UL,18446744073709551615UL,18446744073709551615UL}}};
    int8_t *l_2088 = &g_931.f1;
    union U0 ***l_2109 = &g_742;
    int32_t l_2110[9][8][3] = {{{0x79FD6AF8L,0x10C07469L,7L},{0x54DA928EL,0xD0580B4BL,2L},{0xD40A3435L,(-1L),(-1L)},{0x15FB199AL,0x1E276256L,(-1L)},{0xEE773408L,0x79FD6AF8L,2L},{(-6L),0xEE773408L,7L},{0xF8F41E5DL,0x4C97B9C1L,0x1E276256L},{(-7L),0xEE773408L,0x10C07469L}},{{0x6714E2CAL,0x79FD6AF8L,0xD40A3435L},{0x1E276256L,0x1E276256L,0xEE773408L},{0x1E276256L,(-1L),(-7L)},{0x6714E2CAL,0xD0580B4BL,0x8C2B2F43L},{(-7L),0x10C07469L,0x6714E2CAL},{0xF8F41E5DL,0x6714E2CAL,0x8C2B2F43L},{(-6L),1L,(-7L)},{0xEE773408L,0x54DA928EL,0xEE773408L}},{{0x15FB199AL,0x54DA928EL,0xD40A3435L},{0xD40A3435L,1L,0x10C07469L},{0x54DA928EL,0x6714E2CAL,0x1E276256L},{0x79FD6AF8L,0x10C07469L,7L},{0x54DA928EL,0xD0580B4BL,2L},{0xD40A3435L,(-1L),(-1L)},{0x15FB199AL,0x1E276256L,(-1L)},{0xEE773408L,0x79FD6AF8L,2L}},{{(-6L),0xEE773408L,7L},{0xF8F41E5DL,0x4C97B9C1L,0x1E276256L},{(-7L),0xEE773408L,0x10C07469L},{0x6714E2CAL,0x79FD6AF8L,0xD40A3435L},{0x1E276256L,0x1E276256L,0xEE773408L},{0x1E276256L,(-1L),(-7L)},{0x6714E2CAL,0xD0580B4BL,0x8C2B2F43L},{(-7L),0x10C07469L,0x6714E2CAL}},{{0xF8F41E5DL,0x6714E2CAL,0x8C2B2F43L},{(-6L),1L,(-7L)},{0xEE773408L,0x54DA928EL,0xEE773408L},{0x15FB199AL,0x54DA928EL,0xD40A3435L},{0xD40A3435L,1L,0x10C07469L},{0x54DA928EL,0x6714E2CAL,0x1E276256L},{0x79FD6AF8L,0x10C07469L,7L},{0x54DA928EL,0xD0580B4BL,2L}},{{0xD40A3435L,(-1L),(-1L)},{0x15FB199AL,0x1E276256L,(-1L)},{0xEE773408L,0x79FD6AF8L,2L},{(-6L),0xEE773408L,7L},{0xF8F41E5DL,0x4C97B9C1L,0x1E276256L},{(-7L),0xEE773408L,0x10C07469L},{0x6714E2CAL,0x79FD6AF8L,0xD40A3435L},{0x1E276256L,0x1E276256L,0xEE773408L}},{{0x1E276256L,(-1L),(-7L)},{0x6714E2CAL,0xD0580B4BL,0x8C2B2F43L},{(-7L),0x10C07469L,0x6714E2CAL},{0xF8F41E5DL,0x6714E2CAL,0x8C2B2F43L},{(-6L),1L,(-7L)},{0xEE773408L,0x54DA928EL,0xEE773408L},{0x15FB199AL,0x54DA928EL,0xD40A3435L},{0xD40A3435L,1L,0x10C07469L}},{{0x54DA928EL,0x6714E2CAL,0x1E276256L},{0x79FD6AF8L,0x10C07469L,7L},{0x54DA928EL,0xD0580B4BL,2L},{0xD40A3435L,(-1L),(-1L)},{0x15FB199AL,0x1E276256L,(-1L)},{0xEE773408L,0x79FD6AF8L,2L},{(-6L),0x15FB199AL,(-7L)},{0L,0x8C2B2F43L,0xF8F41E5DL}},{{0xD40A3435L,0x15FB199AL,(-6L)},{0x79FD6AF8L,(-1L),0xEE773408L},{0xF8F41E5DL,0xF8F41E5DL,0x15FB199AL},{0xF8F41E5DL,0x1E276256L,0xD40A3435L},{0x79FD6AF8L,2L,0x54DA928EL},{0xD40A3435L,(-6L),0x79FD6AF8L},{0L,0x79FD6AF8L,0x54DA928EL},{7L,0x4C97B9C1L,0xD40A3435L}}};
    uint8_t ***l_2243 = &g_1790;
    int64_t ***l_2256 = &g_1361;
    int32_t *l_2291 = &g_1035;
    int32_t **l_2290 = &l_2291;
    int32_t ***l_2289[9] = {(void*)0,(void*)0,&l_2290,(void*)0,(void*)0,&l_2290,(void*)0,(void*)0,&l_2290};
    int i, j, k;
    for (i = 0; i < 2; i++)
        l_72[i] = &l_67;
    (*g_48) = ((g_46 |= p_28) & ((safe_unary_minus_func_int32_t_s(g_2[2][1])) == (*p_31)));
    for (g_46 = 3; (g_46 >= 23); g_46 = safe_add_func_int16_t_s_s(g_46, 7))
    { /* block id: 12 */
        return (*g_48);
    }
    ++l_73;
    for (l_70 = (-5); (l_70 != 22); l_70 = safe_add_func_uint16_t_u_u(l_70, 9))
    { /* block id: 18 */
        int8_t *l_86 = &g_43[3][3];
        uint32_t *l_1858[2];
        int32_t l_1859 = 0x6A1D4DF1L;
        int8_t l_1878 = (-1L);
        int32_t * const **l_1935 = (void*)0;
        int16_t l_1974 = 1L;
        const union U0 *l_2023 = &g_2024;
        const union U0 **l_2022[3][1][4] = {{{&l_2023,&l_2023,(void*)0,&l_2023}},{{&l_2023,&l_2023,&l_2023,&l_2023}},{{&l_2023,&l_2023,&l_2023,&l_2023}}};
        uint64_t l_2029 = 0xD10F153890FDB21BLL;
        int32_t l_2038 = 5L;
        int32_t l_2039 = (-5L);
        int32_t l_2051 = 5L;
        int32_t l_2054 = 0x573DA728L;
        int32_t l_2058 = 0x884BC591L;
        int32_t l_2061[9][7] = {{3L,3L,0x56F9710FL,3L,3L,0x56F9710FL,3L},{3L,0xBF4AD781L,0xBF4AD781L,3L,0xBF4AD781L,0xBF4AD781L,3L},{0xBF4AD781L,3L,0xBF4AD781L,0xBF4AD781L,3L,0xBF4AD781L,0xBF4AD781L},{3L,3L,0x56F9710FL,3L,3L,0x56F9710FL,3L},{3L,0xBF4AD781L,0xBF4AD781L,3L,0xBF4AD781L,0xBF4AD781L,3L},{0xBF4AD781L,3L,0xBF4AD781L,0xBF4AD781L,3L,0xBF4AD781L,0xBF4AD781L},{3L,3L,0x56F9710FL,3L,3L,0x56F9710FL,3L},{3L,0xBF4AD781L,0xBF4AD781L,3L,0xBF4AD781L,0xBF4AD781L,3L},{0xBF4AD781L,3L,0xBF4AD781L,0xBF4AD781L,3L,0xBF4AD781L,0xBF4AD781L}};
        uint8_t l_2178[7];
        int32_t l_2265 = 0L;
        uint16_t *l_2300 = (void*)0;
        const uint8_t *l_2309 = &l_2178[0];
        const uint8_t **l_2308 = &l_2309;
        const uint8_t ***l_2307 = &l_2308;
        uint32_t l_2354 = 4294967294UL;
        int i, j, k;
        for (i = 0; i < 2; i++)
            l_1858[i] = (void*)0;
        for (i = 0; i < 7; i++)
            l_2178[i] = 0xC8L;
        (*l_68) &= l_78;
    }
    return p_29;
}


/* ------------------------------------------ */
/* 
 * reads : g_46 g_116 g_49 g_123 g_21 g_48 g_134 g_3 g_2 g_139 g_140 g_173 g_176 g_220 g_455 g_250
 * writes: g_46 g_116 g_123 g_21 g_49 g_134 g_140 g_43 g_164 g_173 g_455 g_338 g_124
 */
static uint32_t  func_79(int64_t * p_80, int8_t * p_81)
{ /* block id: 33 */
    int16_t l_107 = 0x262DL;
    int32_t l_453 = 0xE4C6DBD5L;
    int32_t l_1857 = 0x89EFCA3DL;
    for (g_46 = (-29); (g_46 > 13); g_46 = safe_add_func_uint8_t_u_u(g_46, 2))
    { /* block id: 36 */
        uint64_t *l_111[5] = {&g_21,&g_21,&g_21,&g_21,&g_21};
        int32_t l_452 = 0x8223CE57L;
        uint8_t *l_454 = &g_455;
        const int64_t *l_459[2];
        const int64_t **l_458 = &l_459[0];
        int32_t *l_1856[2];
        int i;
        for (i = 0; i < 2; i++)
            l_459[i] = &g_460;
        for (i = 0; i < 2; i++)
            l_1856[i] = (void*)0;
        l_1857 ^= (func_100(func_102(l_107, l_107, (func_108(l_111[0], l_111[0]) , (l_453 = l_452)), (((*l_454)++) < (((g_250[2][8] , &g_46) != ((*l_458) = &g_46)) <= l_452)))) == 1L);
    }
    return l_1857;
}


/* ------------------------------------------ */
/* 
 * reads : g_49 g_48
 * writes: g_49
 */
static int64_t * func_82(int8_t * p_83, uint32_t  p_84, uint16_t  p_85)
{ /* block id: 20 */
    for (g_49 = 0; (g_49 < (-24)); g_49 = safe_sub_func_int64_t_s_s(g_49, 3))
    { /* block id: 23 */
        int32_t *l_97 = &g_3[1][3];
        int32_t **l_96 = &l_97;
        if ((*g_48))
            break;
        for (p_85 = 0; (p_85 == 43); ++p_85)
        { /* block id: 27 */
            uint32_t l_93[9] = {0xE88D378BL,0xE88D378BL,0xE88D378BL,0xE88D378BL,0xE88D378BL,0xE88D378BL,0xE88D378BL,0xE88D378BL,0xE88D378BL};
            int32_t **l_95 = (void*)0;
            int32_t ***l_94[8] = {(void*)0,&l_95,(void*)0,&l_95,(void*)0,&l_95,(void*)0,&l_95};
            int i;
            l_93[2] = (safe_rshift_func_uint8_t_u_u(0x7BL, 6));
            l_96 = (void*)0;
        }
    }
    return &g_46;
}


/* ------------------------------------------ */
/* 
 * reads :
 * writes:
 */
static uint64_t  func_100(uint32_t  p_101)
{ /* block id: 273 */
    int32_t l_468 = 1L;
    int16_t *l_480[10][8][3] = {{{&g_134,&g_134,&g_134},{&g_338,&g_134,&g_338},{&g_338,&g_134,&g_134},{&g_338,&g_338,(void*)0},{&g_173,&g_134,&g_134},{(void*)0,&g_134,&g_338},{&g_173,&g_134,&g_173},{&g_338,(void*)0,&g_338}},{{&g_338,&g_338,&g_134},{&g_338,(void*)0,(void*)0},{&g_134,&g_134,&g_134},{&g_338,&g_134,&g_338},{&g_338,&g_134,&g_134},{&g_338,&g_338,(void*)0},{&g_173,&g_134,&g_134},{(void*)0,&g_134,&g_338}},{{&g_173,&g_134,&g_173},{&g_338,(void*)0,&g_338},{&g_338,&g_338,&g_173},{&g_338,&g_338,&g_338},{&g_173,&g_338,&g_134},{&g_338,&g_338,&g_338},{&g_134,&g_173,&g_134},{(void*)0,(void*)0,&g_338}},{{&g_134,&g_173,&g_173},{&g_338,&g_338,&g_134},{&g_134,&g_338,&g_134},{(void*)0,&g_338,&g_134},{&g_134,&g_134,&g_173},{&g_338,&g_338,&g_338},{&g_173,&g_338,&g_134},{&g_338,&g_338,&g_338}},{{&g_134,&g_173,&g_134},{(void*)0,(void*)0,&g_338},{&g_134,&g_173,&g_173},{&g_338,&g_338,&g_134},{&g_134,&g_338,&g_134},{(void*)0,&g_338,&g_134},{&g_134,&g_134,&g_173},{&g_338,&g_338,&g_338}},{{&g_173,&g_338,&g_134},{&g_338,&g_338,&g_338},{&g_134,&g_173,&g_134},{(void*)0,(void*)0,&g_338},{&g_134,&g_173,&g_173},{&g_338,&g_338,&g_134},{&g_134,&g_338,&g_134},{(void*)0,&g_338,&g_134}},{{&g_134,&g_134,&g_173},{&g_338,&g_338,&g_338},{&g_173,&g_338,&g_134},{&g_338,&g_338,&g_338},{&g_134,&g_173,&g_134},{(void*)0,(void*)0,&g_338},{&g_134,&g_173,&g_173},{&g_338,&g_338,&g_134}},{{&g_134,&g_338,&g_134},{(void*)0,&g_338,&g_134},{&g_134,&g_134,&g_173},{&g_338,&g_338,&g_338},{&g_173,&g_338,&g_134},{&g_338,&g_338,&g_338},{&g_134,&g_173,&g_134},{(void*)0,(void*)0,&g_338}},{{&g_134,&g_173,&g_173},{&g_338,&g_338,&g_134},{&g_134,&g_338,&g_134},{(void*)0,&g_338,&g_134},{&g_134,&g_134,&g_173},{&g_338,&g_338,&g_338},{&g_173,&g_338,&g_134},{&g_338,&g_338,&g_338}},{{&g_134,&g_173,&g_134},{(void*)0,(void*)0,&g_338},{&g_134,&g_173,&g_173},{&g_338,&g_338,&g_134},{&g_134,&g_338,&g_134},{(void*)0,&g_338,&g_134},{&g_134,&g_134,&g_173},{&g_338,&g_338,&g_338}}};
    int16_t **l_479 = &l_480[5][0][2];
    int64_t *l_487 = (void*)0;
    int64_t **l_486 = &l_487;
    int64_t ***l_485 = &l_486;
    uint16_t l_488[9][3] = {{7UL,0UL,0UL},{7UL,0UL,0UL},{0UL,65527UL,65527UL},{0UL,65527UL,65527UL},{0UL,65527UL,65527UL},{0UL,65527UL,65527UL},{0UL,65527UL,65527UL},{0UL,65527UL,65527UL},{0UL,65527UL,65527UL}};
    int32_t l_495 = 1L;
    int32_t l_507[4][8][8] = {{{3L,(-10L),0L,0xDF41160DL,0L,0x88D5744FL,0x54FC0839L,2L},{2L,0L,0x511E5E6EL,0x71C9BA3CL,2L,2L,0x3BBA9BDEL,0xDF2C5EFFL},{0xF8458BC2L,(-10L),0x71C9BA3CL,0xAB6F3513L,0x788929ECL,0x232CE009L,0L,0L},{0x590FD0B3L,0L,0xB57AD468L,(-1L),(-3L),0xC8685BBDL,(-3L),(-1L)},{0xDF41160DL,0x8579C1D8L,0xDF41160DL,0L,0L,(-1L),0L,0xE142AC31L},{1L,0xD7AE59FFL,0L,0x232CE009L,0xF772F0E5L,0xDB570239L,0L,1L},{1L,0L,0x95CBD95BL,(-10L),0L,(-3L),0xAB6F3513L,0xCFEA6504L},{0xDF41160DL,0x35C1D361L,1L,(-1L),(-3L),0xA258A555L,1L,0x5A81C4D4L}},{{0x590FD0B3L,0x37E9F206L,0L,0L,0x788929ECL,(-10L),0xC88D81F1L,1L},{0xF8458BC2L,0xF039BD0AL,0xE142AC31L,0xDF2C5EFFL,2L,0L,0xDF41160DL,(-4L)},{2L,0xB57AD468L,(-1L),0xDD6E7609L,0L,0xF8458BC2L,(-1L),0x54FC0839L},{3L,(-1L),0xACB9B7B1L,0x788929ECL,2L,0x35C1D361L,(-1L),1L},{0xB57AD468L,0L,0x88D5744FL,(-1L),(-10L),1L,1L,(-10L)},{0xF772F0E5L,0x31FA74BAL,0x31FA74BAL,0xF772F0E5L,8L,0xACB9B7B1L,0xF039BD0AL,(-6L)},{2L,0xAB6F3513L,0xDB570239L,2L,0x37E9F206L,1L,0x8EBC6DF5L,1L},{0x955B4169L,0xAB6F3513L,0x8579C1D8L,0x511E5E6EL,0xBC40C17EL,0xACB9B7B1L,0xCFEA6504L,0x232CE009L}},{{0L,0x31FA74BAL,0x54FC0839L,0L,0xC88D81F1L,1L,0x95CBD95BL,(-1L)},{0x8579C1D8L,0L,1L,1L,0x4D7683C9L,0x35C1D361L,(-4L),0x272B04E8L},{0xBC40C17EL,(-1L),0x955B4169L,(-10L),0x590FD0B3L,0xF8458BC2L,0L,8L},{0xDD6E7609L,0xB57AD468L,0x7582B9D6L,0xDB570239L,0x8EBC6DF5L,0L,(-5L),2L},{0x37E9F206L,0xF039BD0AL,2L,0xE142AC31L,1L,(-10L),(-1L),3L},{0L,0x37E9F206L,1L,0L,0xF772F0E5L,0L,0x788929ECL,0L},{0xCFEA6504L,(-5L),0x7B26BC06L,(-5L),0xCFEA6504L,(-1L),1L,(-3L)},{0L,0L,(-1L),0L,0xE142AC31L,1L,(-4L),(-5L)}},{{(-10L),0xDF41160DL,(-1L),0x272B04E8L,(-4L),0x8579C1D8L,1L,0x31FA74BAL},{0xE142AC31L,0xAB6F3513L,0x7B26BC06L,(-3L),0x4D7683C9L,0x7582B9D6L,0x788929ECL,0xDF2C5EFFL},{2L,0xC8685BBDL,1L,0x88D5744FL,0xAB6F3513L,3L,0xACB9B7B1L,1L},{(-3L),3L,(-1L),(-1L),0x788929ECL,0x511E5E6EL,0xDB570239L,0L},{0xC88D81F1L,0L,0x54FC0839L,0x31FA74BAL,0L,0xDF2C5EFFL,(-10L),(-8L)},{0xDB570239L,(-8L),0xF25FC601L,0xCFEA6504L,0x71C9BA3CL,0x5A81C4D4L,0x31FA74BAL,0xB57AD468L},{0xF039BD0AL,0x590FD0B3L,0x788929ECL,0xBC40C17EL,(-3L),1L,0L,0L},{1L,0x5A81C4D4L,0x590FD0B3L,0x590FD0B3L,0x5A81C4D4L,1L,0xF039BD0AL,(-1L)}}};
    int32_t *l_520[2][4] = {{&l_507[0][7][3],&l_507[0][2][3],&l_507[0][7][3],&l_507[0][7][3]},{&l_507[0][2][3],&l_507[0][2][3],&g_250[2][7],&l_507[0][2][3]}};
    int8_t **l_541[10] = {&g_124[2],&g_124[2],&g_124[2],&g_124[2],&g_124[2],&g_124[2],&g_124[2],&g_124[2],&g_124[2],&g_124[2]};
    uint32_t l_647 = 0x5791654AL;
    uint32_t l_759 = 9UL;
    uint32_t l_768 = 18446744073709551609UL;
    uint32_t l_854 = 4294967295UL;
    uint32_t ***l_879 = &g_828;
    uint32_t ***l_880 = &g_828;
    int64_t l_973 = 0xA58AF59CFC43E8F3LL;
    int8_t l_974 = 0L;
    int8_t l_1037 = 2L;
    int8_t l_1060 = (-5L);
    uint8_t *l_1072 = &g_164;
    uint8_t **l_1071 = &l_1072;
    uint8_t ***l_1070 = &l_1071;
    uint16_t l_1076 = 1UL;
    uint8_t l_1111 = 255UL;
    int32_t l_1199 = 0x1293C933L;
    uint16_t *l_1235 = &g_213;
    uint16_t **l_1234 = &l_1235;
    int16_t l_1276 = 4L;
    int64_t l_1277 = 5L;
    uint64_t l_1302 = 0xEB4AAB1D67A5E7CCLL;
    int8_t ***l_1371[8] = {&g_123,(void*)0,&g_123,&g_123,(void*)0,&g_123,&g_123,(void*)0};
    int8_t ****l_1370[8][5] = {{&l_1371[2],&l_1371[5],&l_1371[2],&l_1371[2],&l_1371[2]},{(void*)0,&l_1371[2],&l_1371[2],&l_1371[2],(void*)0},{&l_1371[2],&l_1371[2],&l_1371[5],(void*)0,&l_1371[5]},{&l_1371[5],&l_1371[5],&l_1371[2],(void*)0,&l_1371[7]},{&l_1371[2],&l_1371[2],&l_1371[2],&l_1371[2],&l_1371[5]},{&l_1371[2],(void*)0,&l_1371[2],&l_1371[2],(void*)0},{&l_1371[5],&l_1371[2],&l_1371[2],&l_1371[2],&l_1371[2]},{&l_1371[2],&l_1371[5],&l_1371[2],&l_1371[2],&l_1371[2]}};
    uint16_t l_1457 = 0xFCABL;
    int32_t **l_1463 = &g_1010;
    uint8_t * const *l_1480 = (void*)0;
    int32_t l_1602[2];
    union U0 ** const *l_1625 = &g_742;
    int8_t l_1701 = 0L;
    int8_t l_1703 = 0xAFL;
    int8_t l_1768 = (-9L);
    uint32_t l_1777 = 1UL;
    uint8_t l_1788 = 255UL;
    int32_t *l_1841 = &g_1035;
    int32_t **l_1840 = &l_1841;
    int i, j, k;
    for (i = 0; i < 2; i++)
        l_1602[i] = 1L;
    return p_101;
}


/* ------------------------------------------ */
/* 
 * reads : g_338 g_49
 * writes: g_338 g_49 g_124
 */
static uint32_t  func_102(uint32_t  p_103, const int16_t  p_104, int32_t  p_105, uint16_t  p_106)
{ /* block id: 261 */
    uint32_t l_463 = 18446744073709551611UL;
    for (g_338 = 5; (g_338 >= 0); g_338 -= 1)
    { /* block id: 264 */
        for (g_49 = 0; g_49 < 3; g_49 += 1)
        {
            g_124[g_49] = (void*)0;
        }
        for (g_49 = 1; (g_49 <= 5); g_49 += 1)
        { /* block id: 268 */
            int32_t *l_461 = &g_250[1][0];
            int32_t *l_462[7][8][4] = {{{&g_49,&g_49,&g_250[1][4],&g_250[1][4]},{&g_3[2][3],&g_3[2][3],&g_250[2][0],&g_3[2][3]},{&g_49,&g_3[6][4],&g_3[8][1],&g_3[2][3]},{&g_3[2][3],&g_250[2][8],(void*)0,&g_3[8][1]},{&g_250[2][0],&g_250[2][8],&g_250[1][5],&g_3[2][3]},{&g_250[2][8],&g_3[6][4],&g_49,&g_3[2][3]},{&g_250[1][7],&g_3[2][3],&g_250[1][9],&g_250[1][4]},{(void*)0,&g_49,&g_250[2][8],&g_250[2][8]}},{{&g_250[1][9],(void*)0,&g_49,(void*)0},{&g_3[8][1],&g_3[2][3],&g_250[2][8],&g_250[2][8]},{&g_250[2][0],&g_250[2][8],&g_250[2][8],(void*)0},{&g_49,&g_49,&g_3[2][3],(void*)0},{&g_49,&g_3[6][4],&g_250[2][8],&g_3[2][3]},{&g_250[2][0],(void*)0,&g_250[2][8],&g_250[1][5]},{&g_49,(void*)0,&g_250[0][7],&g_250[2][8]},{&g_3[6][3],&g_250[2][8],&g_250[2][8],&g_250[2][8]}},{{&g_250[1][9],&g_3[6][3],&g_3[6][3],&g_250[1][9]},{&g_250[2][8],&g_250[1][7],&g_250[1][4],&g_49},{&g_250[2][8],&g_49,&g_49,&g_3[8][1]},{&g_3[2][3],&g_250[2][8],&g_250[1][9],&g_3[8][1]},{&g_250[2][8],&g_49,&g_49,&g_49},{(void*)0,&g_250[1][7],&g_3[2][3],&g_250[1][9]},{&g_3[2][3],&g_3[6][3],&g_3[2][3],&g_250[2][8]},{(void*)0,&g_250[2][8],&g_250[1][7],&g_250[2][8]}},{{&g_49,(void*)0,&g_49,&g_250[1][5]},{&g_250[0][7],(void*)0,(void*)0,&g_3[2][3]},{(void*)0,&g_3[6][4],&g_250[2][8],(void*)0},{&g_250[1][4],&g_49,&g_250[2][8],(void*)0},{(void*)0,&g_250[2][8],(void*)0,&g_250[2][8]},{&g_250[0][7],&g_250[2][8],&g_49,&g_49},{&g_49,&g_49,&g_250[1][7],&g_250[2][8]},{(void*)0,&g_250[1][4],&g_3[2][3],&g_3[2][3]}},{{&g_3[2][3],&g_3[2][3],&g_3[2][3],&g_250[2][8]},{(void*)0,&g_250[1][5],&g_49,&g_250[1][7]},{&g_250[2][8],&g_250[2][8],&g_250[1][9],&g_49},{&g_3[2][3],&g_250[2][8],&g_49,&g_250[1][7]},{&g_250[2][8],&g_250[1][5],&g_250[1][4],&g_250[2][8]},{&g_250[2][8],&g_3[2][3],&g_3[6][3],&g_3[2][3]},{&g_250[1][9],&g_250[1][4],&g_250[2][8],&g_250[2][8]},{&g_3[6][3],&g_49,&g_250[0][7],&g_49}},{{&g_49,&g_250[2][8],&g_250[2][8],&g_250[2][8]},{&g_250[2][0],&g_250[2][8],&g_250[2][8],(void*)0},{&g_49,&g_49,&g_3[2][3],(void*)0},{&g_49,&g_3[6][4],&g_250[2][8],&g_3[2][3]},{&g_250[2][0],(void*)0,&g_250[2][8],&g_250[1][5]},{&g_49,(void*)0,&g_250[0][7],&g_250[2][8]},{&g_3[6][3],&g_250[2][8],&g_250[2][8],&g_250[2][8]},{&g_250[1][9],&g_3[6][3],&g_3[6][3],&g_250[1][9]}},{{&g_250[2][8],&g_250[1][7],&g_250[1][4],&g_49},{&g_250[2][8],&g_49,&g_49,&g_3[8][1]},{&g_3[2][3],&g_250[2][8],&g_250[1][9],&g_3[8][1]},{&g_250[2][8],&g_49,&g_49,&g_49},{(void*)0,&g_250[1][7],&g_3[2][3],&g_250[1][9]},{&g_3[2][3],&g_3[6][3],&g_3[2][3],&g_250[2][8]},{(void*)0,&g_250[2][8],&g_250[1][7],&g_250[2][8]},{&g_49,(void*)0,&g_49,&g_250[1][5]}}};
            int i, j, k;
            l_463--;
        }
    }
    return l_463;
}


/* ------------------------------------------ */
/* 
 * reads : g_116 g_49 g_123 g_21 g_48 g_134 g_3 g_2 g_139 g_140 g_173 g_176 g_220
 * writes: g_116 g_123 g_21 g_49 g_134 g_140 g_43 g_164 g_173
 */
static uint32_t  func_108(uint64_t * p_109, int64_t * const  p_110)
{ /* block id: 37 */
    int32_t *l_112 = &g_49;
    int32_t *l_113 = &g_49;
    int32_t *l_114 = &g_49;
    int32_t *l_115[2];
    int64_t *l_120 = &g_46;
    int64_t **l_119 = &l_120;
    int8_t *l_121 = &g_43[2][7];
    int8_t **l_122 = &l_121;
    int8_t ***l_125 = (void*)0;
    int8_t ***l_126 = &g_123;
    int8_t ***l_127 = (void*)0;
    int8_t **l_128 = (void*)0;
    uint32_t *l_129 = &g_116;
    int64_t *l_133 = (void*)0;
    int64_t **l_132 = &l_133;
    uint32_t l_256[6] = {0xE6EE1648L,0xE6EE1648L,0xE6EE1648L,0xE6EE1648L,0xE6EE1648L,0xE6EE1648L};
    int64_t **** const l_320 = (void*)0;
    const uint32_t l_324 = 4UL;
    uint32_t l_384 = 0x8B99E2F6L;
    int32_t l_432 = 0x6E1D15E3L;
    int i;
    for (i = 0; i < 2; i++)
        l_115[i] = &g_49;
    ++g_116;
    g_134 ^= (((((void*)0 != &g_3[7][5]) , ((*l_119) = (void*)0)) == ((*l_132) = ((*l_112) , func_82(((*l_122) = l_121), ((*l_129) = ((l_128 = ((*l_126) = g_123)) != &g_124[1])), (((*p_110) &= (safe_sub_func_int32_t_s_s((*l_113), ((*l_114) < (*l_112))))) , g_21))))) > 0xC7AB573DB0A16214LL);
    if (((*l_114) = (*l_113)))
    { /* block id: 48 */
        uint32_t l_136 = 4294967288UL;
        int32_t l_171[9][2];
        int64_t l_189 = (-5L);
        int16_t *l_192 = (void*)0;
        uint32_t * const l_224 = &g_116;
        const int8_t *l_235 = &g_43[2][6];
        int8_t **l_246 = (void*)0;
        uint8_t l_248[9][1][6] = {{{0xE5L,0xE5L,0xE5L,0xE5L,0xE5L,0xE5L}},{{0xE5L,0xE5L,0xE5L,0xE5L,0xE5L,0xE5L}},{{0xE5L,0xE5L,0xE5L,0xE5L,0xE5L,0xE5L}},{{0xE5L,0xE5L,0xE5L,0xE5L,0xE5L,0xE5L}},{{0xE5L,0xE5L,0xE5L,0xE5L,0xE5L,0xE5L}},{{0xE5L,0xE5L,0xE5L,0xE5L,0xE5L,0xE5L}},{{0xE5L,0xE5L,0xE5L,0xE5L,0xE5L,0xE5L}},{{0xE5L,0xE5L,0xE5L,0xE5L,0xE5L,0xE5L}},{{0xE5L,0xE5L,0xE5L,0xE5L,0xE5L,0xE5L}}};
        int32_t l_297 = 0x83FA38E5L;
        uint64_t l_341 = 0UL;
        uint8_t *l_420 = &g_164;
        uint8_t **l_419[7];
        int32_t **l_422 = (void*)0;
        int32_t **l_423 = &l_112;
        int i, j, k;
        for (i = 0; i < 9; i++)
        {
            for (j = 0; j < 2; j++)
                l_171[i][j] = 0xF6C4FF35L;
        }
        for (i = 0; i < 7; i++)
            l_419[i] = &l_420;
lbl_135:
        (*l_114) = 0x3C23CF8CL;
        for (g_116 = 0; (g_116 <= 2); g_116 += 1)
        { /* block id: 52 */
            const uint32_t l_148 = 18446744073709551615UL;
            uint64_t *l_179 = &g_21;
            uint32_t *l_205[5];
            int32_t l_206 = 0x5EDAC480L;
            int32_t l_209[1];
            const int8_t *l_231 = &g_43[3][3];
            int64_t l_249 = 0x8129C7174AD0AB60LL;
            uint16_t l_255 = 0x0D22L;
            int64_t * const *l_258 = &l_133;
            int64_t * const **l_257 = &l_258;
            int i;
            for (i = 0; i < 5; i++)
                l_205[i] = &l_136;
            for (i = 0; i < 1; i++)
                l_209[i] = 0x15693BE2L;
            for (g_134 = 2; (g_134 >= 0); g_134 -= 1)
            { /* block id: 55 */
                uint32_t l_151 = 0x2502BEA8L;
                int32_t l_154 = 0x1C8C0566L;
                int8_t l_155[2][8][7] = {{{0xE0L,(-8L),0x39L,1L,(-4L),(-1L),0x9EL},{(-8L),0x39L,0xB3L,0xFEL,6L,0x4CL,0x95L},{0x39L,0xD4L,1L,0x4FL,0x7FL,0xD2L,(-4L)},{0x56L,0xD4L,0L,0x34L,0L,0xD4L,0x56L},{0x9EL,0x39L,0xDEL,0x66L,0x4CL,0L,0x3FL},{1L,(-8L),0x9EL,0x64L,0xA3L,6L,0xD4L},{0x4FL,(-1L),0xDEL,(-8L),0x95L,(-1L),0L},{0x64L,0xD2L,0L,1L,0xDEL,0x9EL,(-7L)}},{{0x87L,0xB3L,1L,1L,0x64L,1L,1L},{0x4CL,0x4CL,0xB3L,(-8L),0x56L,0x7FL,0x64L},{0x34L,0L,0x39L,0x64L,(-8L),0xA9L,(-8L)},{(-1L),0xE0L,6L,0x66L,0x56L,1L,0xA9L},{0xA3L,0x66L,(-1L),0x34L,0x64L,0x3FL,0xD2L},{0L,(-8L),1L,0x4FL,0xDEL,0x3FL,0xDEL},{0xFEL,0x3FL,0x3FL,0xFEL,0x95L,1L,(-1L)},{(-7L),(-1L),6L,1L,0xA3L,0xA9L,0xD4L}}};
                int i, j, k;
                for (g_21 = 0; (g_21 <= 3); g_21 += 1)
                { /* block id: 58 */
                    return g_3[1][6];
                }
                for (g_49 = 3; (g_49 >= 0); g_49 -= 1)
                { /* block id: 63 */
                    uint8_t l_160 = 7UL;
                    int64_t l_174 = (-1L);
                    for (g_21 = 0; (g_21 <= 2); g_21 += 1)
                    { /* block id: 66 */
                        if (g_116)
                            goto lbl_135;
                    }
                    for (g_21 = 0; (g_21 <= 2); g_21 += 1)
                    { /* block id: 71 */
                        l_136++;
                        return g_2[1][1];
                    }
                    (*g_139) = l_113;
                    for (g_21 = 0; (g_21 <= 2); g_21 += 1)
                    { /* block id: 78 */
                        int64_t l_143 = (-6L);
                        uint32_t *l_152 = (void*)0;
                        uint32_t *l_153 = &l_151;
                        uint8_t *l_163 = &g_164;
                        uint16_t *l_168 = (void*)0;
                        uint16_t *l_169[3];
                        int16_t *l_172 = &g_173;
                        int32_t l_175 = 0L;
                        int i, j;
                        for (i = 0; i < 3; i++)
                            l_169[i] = &g_170;
                        l_175 = (l_174 = (safe_div_func_int8_t_s_s((l_143 != (((safe_add_func_uint64_t_u_u((safe_div_func_uint64_t_u_u(1UL, ((l_148 , (safe_div_func_uint32_t_u_u(((*l_153) = l_151), (l_155[1][7][0] &= (l_154 |= l_136))))) ^ l_143))), (safe_rshift_func_uint8_t_u_s((((safe_rshift_func_int8_t_s_u(l_160, ((*l_163) = (safe_rshift_func_int8_t_s_u((g_43[g_116][g_116] = l_148), 7))))) < ((*l_172) |= (((l_171[5][1] = (safe_mul_func_int16_t_s_s((safe_unary_minus_func_int32_t_s((*g_140))), g_2[3][0]))) ^ l_143) && g_3[2][3]))) | l_143), 6)))) <= (*p_110)) < (*g_140))), g_49)));
                        (*g_176) = l_114;
                    }
                }
            }
        }
        for (g_21 = 0; (g_21 <= 0); g_21 += 1)
        { /* block id: 168 */
            uint16_t *l_270[5];
            uint8_t l_275[2];
            uint64_t l_296 = 0x5C622FEB6F9DCD16LL;
            int32_t *l_300 = &l_171[5][1];
            int32_t l_302 = 0x573A4F68L;
            int32_t l_303 = 0x99E6CCCAL;
            uint8_t l_304 = 255UL;
            int32_t l_396[9][1] = {{0x3E3B50CBL},{0xFC2CCE62L},{0x3E3B50CBL},{0xFC2CCE62L},{0x3E3B50CBL},{0xFC2CCE62L},{0x3E3B50CBL},{0xFC2CCE62L},{0x3E3B50CBL}};
            int i, j;
            for (i = 0; i < 5; i++)
                l_270[i] = &g_170;
            for (i = 0; i < 2; i++)
                l_275[i] = 0x91L;
        }
        (*l_423) = (void*)0;
    }
    else
    { /* block id: 248 */
        int16_t l_424 = 0x01CAL;
        int32_t l_425 = 0x643B7A80L;
        int32_t l_426 = 0xE5725038L;
        int32_t l_427 = 0x2D39D8BFL;
        int32_t l_428 = 0x32233FE2L;
        int32_t l_429 = (-8L);
        int32_t l_430 = 0xDE619A9DL;
        int32_t l_431[6] = {0x2C987BE1L,0x990694C1L,0x2C987BE1L,0x2C987BE1L,0x990694C1L,0x2C987BE1L};
        int8_t l_433 = 0xB6L;
        int32_t l_434[9][6][4] = {{{0x6DA9B72BL,(-1L),0x3468506EL,8L},{0x3745FF5AL,0xF09336E0L,0x6DA9B72BL,8L},{(-1L),0xF09336E0L,0x3468506EL,0xFF3E7B9AL},{0x3468506EL,0xFF3E7B9AL,(-1L),8L},{0x6DA9B72BL,0xFF3E7B9AL,1L,0xFF3E7B9AL},{(-1L),0xF09336E0L,1L,(-1L)}},{{0x6DA9B72BL,(-9L),(-1L),(-1L)},{0x3468506EL,0xF09336E0L,0x3468506EL,0xFF3E7B9AL},{0x3468506EL,0xFF3E7B9AL,(-1L),8L},{0x6DA9B72BL,0xFF3E7B9AL,1L,0xFF3E7B9AL},{(-1L),0xF09336E0L,1L,(-1L)},{0x6DA9B72BL,(-9L),(-1L),(-1L)}},{{0x3468506EL,0xF09336E0L,0x3468506EL,0xFF3E7B9AL},{0x3468506EL,0xFF3E7B9AL,(-1L),8L},{0x6DA9B72BL,0xFF3E7B9AL,1L,0xFF3E7B9AL},{(-1L),0xF09336E0L,1L,(-1L)},{0x6DA9B72BL,(-9L),(-1L),(-1L)},{0x3468506EL,0xF09336E0L,0x3468506EL,0xFF3E7B9AL}},{{0x3468506EL,0xFF3E7B9AL,(-1L),8L},{0x6DA9B72BL,0xFF3E7B9AL,1L,0xFF3E7B9AL},{(-1L),0xF09336E0L,1L,(-1L)},{0x6DA9B72BL,(-9L),(-1L),(-1L)},{0x3468506EL,0xF09336E0L,0x3468506EL,0xFF3E7B9AL},{0x3468506EL,0xFF3E7B9AL,(-1L),8L}},{{0x6DA9B72BL,0xFF3E7B9AL,1L,0xFF3E7B9AL},{(-1L),0xF09336E0L,1L,(-1L)},{0x6DA9B72BL,(-9L),(-1L),(-1L)},{0x3468506EL,0xF09336E0L,0x3468506EL,0xFF3E7B9AL},{0x3468506EL,0xFF3E7B9AL,(-1L),8L},{0x6DA9B72BL,0xFF3E7B9AL,1L,0xFF3E7B9AL}},{{(-1L),0xF09336E0L,1L,(-1L)},{0x6DA9B72BL,(-9L),(-1L),(-1L)},{0x3468506EL,0xF09336E0L,0x3468506EL,0xFF3E7B9AL},{0x3468506EL,0xFF3E7B9AL,(-1L),8L},{0x6DA9B72BL,0xFF3E7B9AL,1L,0xFF3E7B9AL},{(-1L),0xF09336E0L,1L,(-1L)}},{{0x6DA9B72BL,(-9L),(-1L),(-1L)},{0x3468506EL,0xF09336E0L,0x3468506EL,0xFF3E7B9AL},{0x3468506EL,0xFF3E7B9AL,(-1L),8L},{0x6DA9B72BL,0xFF3E7B9AL,1L,0xFF3E7B9AL},{(-1L),0xF09336E0L,1L,(-1L)},{0x6DA9B72BL,(-9L),(-1L),(-1L)}},{{0x3468506EL,0xF09336E0L,0x3468506EL,0xFF3E7B9AL},{0x3468506EL,0xFF3E7B9AL,(-1L),8L},{0x6DA9B72BL,0xFF3E7B9AL,1L,0xFF3E7B9AL},{(-1L),0xF09336E0L,1L,(-1L)},{0x6DA9B72BL,(-9L),(-1L),(-1L)},{0x3468506EL,0xF09336E0L,0x3468506EL,0xFF3E7B9AL}},{{0x3468506EL,0xFF3E7B9AL,(-1L),8L},{0x6DA9B72BL,0xFF3E7B9AL,1L,8L},{0x3468506EL,(-9L),0x3745FF5AL,0xF09336E0L},{(-1L),0xFF3E7B9AL,0x3468506EL,0xF09336E0L},{1L,(-9L),1L,8L},{1L,8L,0x3468506EL,(-1L)}}};
        uint8_t l_435 = 0x83L;
        int16_t **l_440 = (void*)0;
        uint32_t l_449 = 0x51B21DE0L;
        const int32_t *l_451 = (void*)0;
        const int32_t **l_450[8] = {&l_451,&l_451,&l_451,&l_451,&l_451,&l_451,&l_451,&l_451};
        int i, j, k;
        ++l_435;
        (*g_139) = ((((safe_rshift_func_int16_t_s_u((g_173 = l_428), (l_440 == ((safe_sub_func_int32_t_s_s((((*l_113) = 2UL) || (safe_mul_func_uint8_t_u_u((!0x3024CCF0L), (safe_unary_minus_func_int16_t_s((safe_rshift_func_uint8_t_u_s(0UL, 0))))))), l_434[5][3][2])) , l_440)))) ^ (l_426 &= (l_430 = l_449))) != (-1L)) , (void*)0);
        return (*l_113);
    }
    return g_220;
}




/* ---------------------------------------- */
int main (int argc, char* argv[])
{
    int i, j, k;
    int print_hash_value = 0;
    if (argc == 2 && strcmp(argv[1], "1") == 0) print_hash_value = 1;
    platform_main_begin();
    crc32_gentab();
    func_1();
    for (i = 0; i < 6; i++)
    {
        for (j = 0; j < 2; j++)
        {
            transparent_crc(g_2[i][j], "g_2[i][j]", print_hash_value);
            if (print_hash_value) printf("index = [%d][%d]\n", i, j);

        }
    }
    for (i = 0; i < 9; i++)
    {
        for (j = 0; j < 7; j++)
        {
            transparent_crc(g_3[i][j], "g_3[i][j]", print_hash_value);
            if (print_hash_value) printf("index = [%d][%d]\n", i, j);

        }
    }
    for (i = 0; i < 6; i++)
    {
        for (j = 0; j < 2; j++)
        {
            for (k = 0; k < 7; k++)
            {
                transparent_crc(g_12[i][j][k], "g_12[i][j][k]", print_hash_value);
                if (print_hash_value) printf("index = [%d][%d][%d]\n", i, j, k);

            }
        }
    }
    transparent_crc(g_21, "g_21", print_hash_value);
    transparent_crc(g_25, "g_25", print_hash_value);
    for (i = 0; i < 4; i++)
    {
        for (j = 0; j < 10; j++)
        {
            transparent_crc(g_43[i][j], "g_43[i][j]", print_hash_value);
            if (print_hash_value) printf("index = [%d][%d]\n", i, j);

        }
    }
    transparent_crc(g_46, "g_46", print_hash_value);
    transparent_crc(g_49, "g_49", print_hash_value);
    transparent_crc(g_116, "g_116", print_hash_value);
    transparent_crc(g_134, "g_134", print_hash_value);
    transparent_crc(g_164, "g_164", print_hash_value);
    transparent_crc(g_170, "g_170", print_hash_value);
    transparent_crc(g_173, "g_173", print_hash_value);
    transparent_crc(g_213, "g_213", print_hash_value);
    transparent_crc(g_220, "g_220", print_hash_value);
    transparent_crc(g_234, "g_234", print_hash_value);
    transparent_crc(g_238, "g_238", print_hash_value);
    for (i = 0; i < 3; i++)
    {
        for (j = 0; j < 10; j++)
        {
            transparent_crc(g_250[i][j], "g_250[i][j]", print_hash_value);
            if (print_hash_value) printf("index = [%d][%d]\n", i, j);

        }
    }
    for (i = 0; i < 6; i++)
    {
        for (j = 0; j < 9; j++)
        {
            transparent_crc(g_281[i][j], "g_281[i][j]", print_hash_value);
            if (print_hash_value) printf("index = [%d][%d]\n", i, j);

        }
    }
    transparent_crc(g_288, "g_288", print_hash_value);
    transparent_crc(g_338, "g_338", print_hash_value);
    transparent_crc(g_368, "g_368", print_hash_value);
    transparent_crc(g_390.f0, "g_390.f0", print_hash_value);
    transparent_crc(g_390.f1, "g_390.f1", print_hash_value);
    transparent_crc(g_401, "g_401", print_hash_value);
    transparent_crc(g_455, "g_455", print_hash_value);
    transparent_crc(g_460, "g_460", print_hash_value);
    for (i = 0; i < 9; i++)
    {
        for (j = 0; j < 1; j++)
        {
            for (k = 0; k < 6; k++)
            {
                transparent_crc(g_588[i][j][k], "g_588[i][j][k]", print_hash_value);
                if (print_hash_value) printf("index = [%d][%d][%d]\n", i, j, k);

            }
        }
    }
    transparent_crc(g_619.f0, "g_619.f0", print_hash_value);
    transparent_crc(g_619.f1, "g_619.f1", print_hash_value);
    transparent_crc(g_690, "g_690", print_hash_value);
    transparent_crc(g_711.f0, "g_711.f0", print_hash_value);
    transparent_crc(g_711.f1, "g_711.f1", print_hash_value);
    transparent_crc(g_729, "g_729", print_hash_value);
    transparent_crc(g_755.f0, "g_755.f0", print_hash_value);
    transparent_crc(g_755.f1, "g_755.f1", print_hash_value);
    transparent_crc(g_807, "g_807", print_hash_value);
    transparent_crc(g_838.f0, "g_838.f0", print_hash_value);
    transparent_crc(g_838.f1, "g_838.f1", print_hash_value);
    transparent_crc(g_921, "g_921", print_hash_value);
    transparent_crc(g_931.f0, "g_931.f0", print_hash_value);
    transparent_crc(g_931.f1, "g_931.f1", print_hash_value);
    transparent_crc(g_982, "g_982", print_hash_value);
    transparent_crc(g_993.f0, "g_993.f0", print_hash_value);
    transparent_crc(g_993.f1, "g_993.f1", print_hash_value);
    transparent_crc(g_1035, "g_1035", print_hash_value);
    transparent_crc(g_1036, "g_1036", print_hash_value);
    transparent_crc(g_1066.f0, "g_1066.f0", print_hash_value);
    transparent_crc(g_1066.f1, "g_1066.f1", print_hash_value);
    for (i = 0; i < 7; i++)
    {
        for (j = 0; j < 3; j++)
        {
            transparent_crc(g_1095[i][j].f0, "g_1095[i][j].f0", print_hash_value);
            transparent_crc(g_1095[i][j].f1, "g_1095[i][j].f1", print_hash_value);
            if (print_hash_value) printf("index = [%d][%d]\n", i, j);

        }
    }
    transparent_crc(g_1135, "g_1135", print_hash_value);
    for (i = 0; i < 8; i++)
    {
        transparent_crc(g_1159[i], "g_1159[i]", print_hash_value);
        if (print_hash_value) printf("index = [%d]\n", i);

    }
    transparent_crc(g_1161, "g_1161", print_hash_value);
    transparent_crc(g_1270.f0, "g_1270.f0", print_hash_value);
    transparent_crc(g_1270.f1, "g_1270.f1", print_hash_value);
    transparent_crc(g_1296, "g_1296", print_hash_value);
    transparent_crc(g_1404.f0, "g_1404.f0", print_hash_value);
    transparent_crc(g_1404.f1, "g_1404.f1", print_hash_value);
    transparent_crc(g_1520.f0, "g_1520.f0", print_hash_value);
    transparent_crc(g_1520.f1, "g_1520.f1", print_hash_value);
    transparent_crc(g_1533, "g_1533", print_hash_value);
    transparent_crc(g_1539, "g_1539", print_hash_value);
    transparent_crc(g_1598, "g_1598", print_hash_value);
    for (i = 0; i < 5; i++)
    {
        for (j = 0; j < 9; j++)
        {
            transparent_crc(g_1601[i][j], "g_1601[i][j]", print_hash_value);
            if (print_hash_value) printf("index = [%d][%d]\n", i, j);

        }
    }
    transparent_crc(g_1689, "g_1689", print_hash_value);
    transparent_crc(g_1696, "g_1696", print_hash_value);
    transparent_crc(g_1708, "g_1708", print_hash_value);
    transparent_crc(g_1709, "g_1709", print_hash_value);
    transparent_crc(g_1851, "g_1851", print_hash_value);
    transparent_crc(g_1891, "g_1891", print_hash_value);
    for (i = 0; i < 8; i++)
    {
        for (j = 0; j < 9; j++)
        {
            transparent_crc(g_1936[i][j].f0, "g_1936[i][j].f0", print_hash_value);
            transparent_crc(g_1936[i][j].f1, "g_1936[i][j].f1", print_hash_value);
            if (print_hash_value) printf("index = [%d][%d]\n", i, j);

        }
    }
    transparent_crc(g_2024.f0, "g_2024.f0", print_hash_value);
    transparent_crc(g_2024.f1, "g_2024.f1", print_hash_value);
    for (i = 0; i < 3; i++)
    {
        transparent_crc(g_2139[i], "g_2139[i]", print_hash_value);
        if (print_hash_value) printf("index = [%d]\n", i);

    }
    transparent_crc(g_2180, "g_2180", print_hash_value);
    transparent_crc(g_2247, "g_2247", print_hash_value);
    transparent_crc(g_2248, "g_2248", print_hash_value);
    transparent_crc(g_2284.f0, "g_2284.f0", print_hash_value);
    transparent_crc(g_2284.f1, "g_2284.f1", print_hash_value);
    for (i = 0; i < 8; i++)
    {
        for (j = 0; j < 4; j++)
        {
            transparent_crc(g_2363[i][j].f0, "g_2363[i][j].f0", print_hash_value);
            transparent_crc(g_2363[i][j].f1, "g_2363[i][j].f1", print_hash_value);
            if (print_hash_value) printf("index = [%d][%d]\n", i, j);

        }
    }
    transparent_crc(g_2414, "g_2414", print_hash_value);
    transparent_crc(g_2495, "g_2495", print_hash_value);
    transparent_crc(g_2511, "g_2511", print_hash_value);
    transparent_crc(g_2515, "g_2515", print_hash_value);
    transparent_crc(g_2602.f0, "g_2602.f0", print_hash_value);
    transparent_crc(g_2602.f1, "g_2602.f1", print_hash_value);
    transparent_crc(g_2644, "g_2644", print_hash_value);
    for (i = 0; i < 4; i++)
    {
        transparent_crc(g_2662[i], "g_2662[i]", print_hash_value);
        if (print_hash_value) printf("index = [%d]\n", i);

    }
    transparent_crc(g_2763, "g_2763", print_hash_value);
    transparent_crc(g_2767, "g_2767", print_hash_value);
    transparent_crc(g_2809.f0, "g_2809.f0", print_hash_value);
    transparent_crc(g_2809.f1, "g_2809.f1", print_hash_value);
    transparent_crc(g_2869.f0, "g_2869.f0", print_hash_value);
    transparent_crc(g_2869.f1, "g_2869.f1", print_hash_value);
    transparent_crc(g_2990.f0, "g_2990.f0", print_hash_value);
    transparent_crc(g_2990.f1, "g_2990.f1", print_hash_value);
    transparent_crc(g_3082, "g_3082", print_hash_value);
    transparent_crc(g_3113.f0, "g_3113.f0", print_hash_value);
    transparent_crc(g_3113.f1, "g_3113.f1", print_hash_value);
    transparent_crc(g_3270, "g_3270", print_hash_value);
    for (i = 0; i < 4; i++)
    {
        for (j = 0; j < 3; j++)
        {
            transparent_crc(g_3378[i][j], "g_3378[i][j]", print_hash_value);
            if (print_hash_value) printf("index = [%d][%d]\n", i, j);

        }
    }
    for (i = 0; i < 10; i++)
    {
        for (j = 0; j < 8; j++)
        {
            for (k = 0; k < 1; k++)
            {
                transparent_crc(g_3402[i][j][k], "g_3402[i][j][k]", print_hash_value);
                if (print_hash_value) printf("index = [%d][%d][%d]\n", i, j, k);

            }
        }
    }
    transparent_crc(g_3763, "g_3763", print_hash_value);
    for (i = 0; i < 2; i++)
    {
        for (j = 0; j < 7; j++)
        {
            transparent_crc(g_3773[i][j].f0, "g_3773[i][j].f0", print_hash_value);
            transparent_crc(g_3773[i][j].f1, "g_3773[i][j].f1", print_hash_value);
            if (print_hash_value) printf("index = [%d][%d]\n", i, j);

        }
    }
    transparent_crc(g_3843, "g_3843", print_hash_value);
    platform_main_end(crc32_context ^ 0xFFFFFFFFUL, print_hash_value);
    return 0;
}

/************************ statistics *************************
XXX max struct depth: 0
breakdown:
   depth: 0, occurrence: 1125
XXX total union variables: 18

XXX non-zero bitfields defined in structs: 1
XXX zero bitfields defined in structs: 0
XXX const bitfields defined in structs: 0
XXX volatile bitfields defined in structs: 0
XXX structs with bitfields in the program: 63
breakdown:
   indirect level: 0, occurrence: 18
   indirect level: 1, occurrence: 9
   indirect level: 2, occurrence: 11
   indirect level: 3, occurrence: 12
   indirect level: 4, occurrence: 7
   indirect level: 5, occurrence: 6
XXX full-bitfields structs in the program: 0
breakdown:
XXX times a bitfields struct's address is taken: 33
XXX times a bitfields struct on LHS: 0
XXX times a bitfields struct on RHS: 20
XXX times a single bitfield on LHS: 4
XXX times a single bitfield on RHS: 0

XXX max expression depth: 41
breakdown:
   depth: 1, occurrence: 170
   depth: 2, occurrence: 51
   depth: 3, occurrence: 5
   depth: 4, occurrence: 4
   depth: 7, occurrence: 1
   depth: 10, occurrence: 1
   depth: 12, occurrence: 1
   depth: 13, occurrence: 1
   depth: 14, occurrence: 1
   depth: 15, occurrence: 2
   depth: 17, occurrence: 3
   depth: 18, occurrence: 1
   depth: 20, occurrence: 2
   depth: 22, occurrence: 2
   depth: 24, occurrence: 2
   depth: 26, occurrence: 2
   depth: 27, occurrence: 1
   depth: 28, occurrence: 1
   depth: 29, occurrence: 1
   depth: 30, occurrence: 1
   depth: 31, occurrence: 1
   depth: 32, occurrence: 1
   depth: 37, occurrence: 1
   depth: 41, occurrence: 1

XXX total number of pointers: 781

XXX times a variable address is taken: 1681
XXX times a pointer is dereferenced on RHS: 527
breakdown:
   depth: 1, occurrence: 412
   depth: 2, occurrence: 100
   depth: 3, occurrence: 10
   depth: 4, occurrence: 4
   depth: 5, occurrence: 1
XXX times a pointer is dereferenced on LHS: 519
breakdown:
   depth: 1, occurrence: 493
   depth: 2, occurrence: 22
   depth: 3, occurrence: 2
   depth: 4, occurrence: 2
XXX times a pointer is compared with null: 65
XXX times a pointer is compared with address of another variable: 26
XXX times a pointer is compared with another pointer: 38
XXX times a pointer is qualified to be dereferenced: 19066

XXX max dereference level: 5
breakdown:
   level: 0, occurrence: 0
   level: 1, occurrence: 2851
   level: 2, occurrence: 597
   level: 3, occurrence: 103
   level: 4, occurrence: 32
   level: 5, occurrence: 3
XXX number of pointers point to pointers: 373
XXX number of pointers point to scalars: 391
XXX number of pointers point to structs: 0
XXX percent of pointers has null in alias set: 30.9
XXX average alias set size: 1.43

XXX times a non-volatile is read: 2943
XXX times a non-volatile is write: 1560
XXX times a volatile is read: 244
XXX    times read thru a pointer: 82
XXX times a volatile is write: 51
XXX    times written thru a pointer: 8
XXX times a volatile is available for access: 1.37e+04
XXX percentage of non-volatile access: 93.9

XXX forward jumps: 2
XXX backward jumps: 24

XXX stmts: 174
XXX max block depth: 5
breakdown:
   depth: 0, occurrence: 28
   depth: 1, occurrence: 24
   depth: 2, occurrence: 23
   depth: 3, occurrence: 27
   depth: 4, occurrence: 43
   depth: 5, occurrence: 29

XXX percentage a fresh-made variable is used: 16.1
XXX percentage an existing variable is used: 83.9
FYI: the random generator makes assumptions about the integer size. See platform.info for more details.
********************* end of statistics **********************/

