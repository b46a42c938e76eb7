/* test_ew.c - the elementwise kernels of ops/cpu/ew.c and math.c called directly:
 * cpu_unary, cpu_binary, op_unary_number, op_binary_number, cpu_round_decimals and
 * cpu_compare_i64_number. Expected values were computed with NumPy 2.4 (pip, float64 and
 * float32 arrays) and pasted here, never printed by TSL; the i64 comparisons are checked
 * against exact math (x86-64 long double holds every i64 and every double exactly). Math
 * functions (SLEEF, libm) may differ from NumPy by a few ULP; NaN, infinities and signed
 * zeros must match exactly. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "suites.h"
#include "cpu/cpu.h"
#include "cpu/cpu.h"

/* ---------- comparing floats ---------- */

/* Distance in ULPs between two finite floats of the same type, by their ordered bits. */
static int64_t ordered_d(double x) {
    int64_t i;
    memcpy(&i, &x, sizeof i);
    return i < 0 ? INT64_MIN - i : i;
}
static int64_t ordered_f(float x) {
    int32_t i;
    memcpy(&i, &x, sizeof i);
    return i < 0 ? (int64_t)INT32_MIN - i : i;
}

/* NaN matches any NaN; zeros and infinities match exactly, sign included; other values
 * within `ulps`. */
static bool close_d(double got, double want, int ulps) {
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (want == 0 || isinf(want) || got == 0 || isinf(got))
        return got == want && signbit(got) == signbit(want);
    int64_t d = ordered_d(got) - ordered_d(want);
    return (d < 0 ? -d : d) <= ulps;
}
static bool close_f(float got, float want, int ulps) {
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (want == 0 || isinf(want) || got == 0 || isinf(got))
        return got == want && signbit(got) == signbit(want);
    int64_t d = ordered_f(got) - ordered_f(want);
    return (d < 0 ? -d : d) <= ulps;
}
#define ck_close_d(got, want, ulps, what, i)                                              \
    ck_assert_msg(close_d((got), (want), (ulps)), "%s [%d]: got %.17g want %.17g", (what), \
                  (int)(i), (double)(got), (double)(want))
#define ck_close_f(got, want, ulps, what, i)                                            \
    ck_assert_msg(close_f((got), (want), (ulps)), "%s [%d]: got %.9g want %.9g", (what), \
                  (int)(i), (double)(got), (double)(want))

/* ---------- the expected values (NumPy 2.4; generated, then pasted) ---------- */

typedef struct {
    OpCode op;
    double f64[23];
    float f32[23];
} UnaryCase;
typedef struct {
    int64_t decimals;
    double want[16];
} RoundCase;
typedef struct {
    int64_t decimals;
    float want[16];
} RoundCaseF;
typedef struct {
    OpCode op;
    double want[30];
} PairCase;

/* clang-format off */
/* inputs of the unary table; as f32 they are rounded (1e308 and 710 overflow to inf there) */
#define NX 23
static const double unary_x[NX] = {
    -0.0, 0.0, NAN, INFINITY, -INFINITY, 0.5, -0.5, 1.0, -1.0, 1e-07, -3.0, 2.0, 0.75, 10.0,
    100.0, 1000.0, 1e+20, -1e+20, 1e+308, 89.0, 710.0, 1.5, -0.999
};
static const UnaryCase unary_cases[] = {
    { OP_TAN,
      {
          -0.0, 0.0, NAN, NAN, NAN, 0.5463024898437905, -0.5463024898437905,
          1.5574077246549023, -1.5574077246549023, 1.0000000000000033e-07, 0.1425465430742778,
          -2.185039863261519, 0.9315964599440725, 0.6483608274590866, -0.5872139151569291,
          1.4703241557027185, -0.8446024630198843, 0.8446024630198843, -0.5086861259107568,
          1.6858253705060158, 6.0288706801151796e-05, 14.101419947171719, -1.5539875313295277
      },
      {
          -0.0f, 0.0f, NAN, NAN, NAN, 0.5463025f, -0.5463025f, 1.5574077f, -1.5574077f, 1e-07f,
          0.14254653f, -2.18504f, 0.93159646f, 0.6483608f, -0.58721393f, 1.4703242f, 0.870492f,
          -0.870492f, NAN, 1.6858253f, 6.0288705e-05f, 14.10142f, -1.5539876f
      }
    },
    { OP_ASIN,
      {
          -0.0, 0.0, NAN, NAN, NAN, 0.5235987755982989, -0.5235987755982989,
          1.5707963267948966, -1.5707963267948966, 1.0000000000000017e-07, NAN, NAN,
          0.848062078981481, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, -1.526071239626163
      },
      {
          -0.0f, 0.0f, NAN, NAN, NAN, 0.5235988f, -0.5235988f, 1.5707964f, -1.5707964f, 1e-07f,
          NAN, NAN, 0.84806216f, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, -1.5260715f
      }
    },
    { OP_ACOS,
      {
          1.5707963267948966, 1.5707963267948966, NAN, NAN, NAN, 1.0471975511965976,
          2.0943951023931957, 0.0, 3.141592653589793, 1.5707962267948967, NAN, NAN,
          0.7227342478134156, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 3.09686756642106
      },
      {
          1.5707964f, 1.5707964f, NAN, NAN, NAN, 1.0471976f, 2.0943952f, 0.0f, 3.1415927f,
          1.5707963f, NAN, NAN, 0.7227342f, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
          3.096868f
      }
    },
    { OP_ATAN,
      {
          -0.0, 0.0, NAN, 1.5707963267948966, -1.5707963267948966, 0.4636476090008061,
          -0.4636476090008061, 0.7853981633974483, -0.7853981633974483, 9.999999999999966e-08,
          -1.2490457723982544, 1.1071487177940904, 0.6435011087932844, 1.4711276743037347,
          1.5607966601082315, 1.5697963271282298, 1.5707963267948966, -1.5707963267948966,
          1.5707963267948966, 1.559560844536934, 1.5693878770220004, 0.982793723247329,
          -0.784897913314115
      },
      {
          -0.0f, 0.0f, NAN, 1.5707964f, -1.5707964f, 0.4636476f, -0.4636476f, 0.7853982f,
          -0.7853982f, 1e-07f, -1.2490457f, 1.1071488f, 0.6435011f, 1.4711277f, 1.5607967f,
          1.5697963f, 1.5707964f, -1.5707964f, 1.5707964f, 1.5595609f, 1.5693879f, 0.98279375f,
          -0.7848979f
      }
    },
    { OP_SINH,
      {
          -0.0, 0.0, NAN, INFINITY, -INFINITY, 0.5210953054937474, -0.5210953054937474,
          1.1752011936438014, -1.1752011936438014, 1.0000000000000017e-07, -10.017874927409903,
          3.6268604078470186, 0.82231673193583, 11013.232874703393, 1.3440585709080678e+43,
          INFINITY, INFINITY, -INFINITY, INFINITY, 2.2448064095871728e+38,
          1.1169973830808555e+308, 2.1292794550948173, -1.173658700352452
      },
      {
          -0.0f, 0.0f, NAN, INFINITY, -INFINITY, 0.5210953f, -0.5210953f, 1.1752012f,
          -1.1752012f, 1e-07f, -10.017875f, 3.6268604f, 0.82231677f, 11013.233f, INFINITY,
          INFINITY, INFINITY, -INFINITY, INFINITY, 2.2448064e+38f, INFINITY, 2.1292794f,
          -1.1736587f
      }
    },
    { OP_COSH,
      {
          1.0, 1.0, NAN, INFINITY, INFINITY, 1.1276259652063807, 1.1276259652063807,
          1.5430806348152437, 1.5430806348152437, 1.0000000000000049, 10.067661995777765,
          3.7621956910836314, 1.2946832846768448, 11013.232920103323, 1.3440585709080678e+43,
          INFINITY, INFINITY, INFINITY, INFINITY, 2.2448064095871728e+38,
          1.1169973830808555e+308, 2.352409615243247, 1.5419062049661147
      },
      {
          1.0f, 1.0f, NAN, INFINITY, INFINITY, 1.1276261f, 1.1276261f, 1.5430807f, 1.5430807f,
          1.0f, 10.067661f, 3.7621956f, 1.2946833f, 11013.233f, INFINITY, INFINITY, INFINITY,
          INFINITY, INFINITY, 2.2448064e+38f, INFINITY, 2.3524096f, 1.5419064f
      }
    },
    { OP_ASINH,
      {
          -0.0, 0.0, NAN, INFINITY, -INFINITY, 0.48121182505960347, -0.48121182505960347,
          0.881373587019543, -0.881373587019543, 9.999999999999982e-08, -1.8184464592320668,
          1.4436354751788103, 0.6931471805599453, 2.99822295029797, 5.298342365610589,
          7.600902709541988, 46.74484904044086, -46.74484904044086, 709.889355822726,
          5.181815110469487, 7.258412646528284, 1.1947632172871092, -0.8806663034322094
      },
      {
          -0.0f, 0.0f, NAN, INFINITY, -INFINITY, 0.4812118f, -0.4812118f, 0.8813736f,
          -0.8813736f, 1e-07f, -1.8184465f, 1.4436355f, 0.6931472f, 2.998223f, 5.298342f,
          7.6009026f, 46.74485f, -46.74485f, INFINITY, 5.181815f, 7.258413f, 1.1947632f,
          -0.8806663f
      }
    },
    { OP_ACOSH,
      {
          NAN, NAN, NAN, INFINITY, NAN, NAN, NAN, 0.0, NAN, NAN, NAN, 1.3169578969248168, NAN,
          2.993222846126381, 5.298292365610485, 7.600902209541989, 46.74484904044086, NAN,
          709.889355822726, 5.181751987126265, 7.258411654661591, 0.9624236501192069, NAN
      },
      {
          NAN, NAN, NAN, INFINITY, NAN, NAN, NAN, 0.0f, NAN, NAN, NAN, 1.316958f, NAN,
          2.993223f, 5.298292f, 7.600902f, 46.74485f, NAN, INFINITY, 5.181752f, 7.258412f,
          0.9624236f, NAN
      }
    },
    { OP_ATANH,
      {
          -0.0, 0.0, NAN, NAN, NAN, 0.5493061443340549, -0.5493061443340549, INFINITY,
          -INFINITY, 1.0000000000000033e-07, NAN, NAN, 0.9729550745276566, NAN, NAN, NAN, NAN,
          NAN, NAN, NAN, NAN, NAN, -3.8002011672501994
      },
      {
          -0.0f, 0.0f, NAN, NAN, NAN, 0.54930615f, -0.54930615f, INFINITY, -INFINITY,
          9.9999994e-08f, NAN, NAN, 0.97295505f, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
          -3.8002076f
      }
    },
    { OP_EXP2,
      {
          1.0, 1.0, NAN, INFINITY, 0.0, 1.4142135623730951, 0.7071067811865476, 2.0, 0.5,
          1.0000000693147204, 0.125, 4.0, 1.681792830507429, 1024.0, 1.2676506002282294e+30,
          1.0715086071862673e+301, INFINITY, 0.0, INFINITY, 6.189700196426902e+26,
          5.386379163185535e+213, 2.8284271247461903, 0.5003466937312903
      },
      {
          1.0f, 1.0f, NAN, INFINITY, 0.0f, 1.4142135f, 0.70710677f, 2.0f, 0.5f, 1.0000001f,
          0.125f, 4.0f, 1.6817929f, 1024.0f, 1.2676506e+30f, INFINITY, INFINITY, 0.0f,
          INFINITY, 6.1897002e+26f, INFINITY, 2.828427f, 0.50034666f
      }
    },
    { OP_EXPM1,
      {
          -0.0, 0.0, NAN, INFINITY, -1.0, 0.6487212707001282, -0.3934693402873666,
          1.7182818284590453, -0.6321205588285577, 1.0000000500000016e-07, -0.950212931632136,
          6.38905609893065, 1.1170000166126746, 22025.465794806718, 2.6881171418161356e+43,
          INFINITY, INFINITY, -1.0, INFINITY, 4.4896128191743455e+38, INFINITY,
          3.481689070338065, -0.631752495386337
      },
      {
          -0.0f, 0.0f, NAN, INFINITY, -1.0f, 0.6487213f, -0.39346933f, 1.7182819f,
          -0.63212055f, 1.0000001e-07f, -0.9502129f, 6.389056f, 1.117f, 22025.465f, INFINITY,
          INFINITY, INFINITY, -1.0f, INFINITY, INFINITY, INFINITY, 3.481689f, -0.6317525f
      }
    },
    { OP_LOG2,
      {
          -INFINITY, -INFINITY, NAN, INFINITY, NAN, -1.0, NAN, 0.0, NAN, -23.253496664211536,
          NAN, 1.0, -0.4150374992788438, 3.321928094887362, 6.643856189774724,
          9.965784284662087, 66.43856189774725, NAN, 1023.1538532253076, 6.475733430966398,
          9.471675214392045, 0.5849625007211562, NAN
      },
      {
          -INFINITY, -INFINITY, NAN, INFINITY, NAN, -1.0f, NAN, 0.0f, NAN, -23.253496f, NAN,
          1.0f, -0.4150375f, 3.321928f, 6.643856f, 9.965784f, 66.43856f, NAN, INFINITY,
          6.4757333f, 9.471675f, 0.5849625f, NAN
      }
    },
    { OP_LOG10,
      {
          -INFINITY, -INFINITY, NAN, INFINITY, NAN, -0.3010299956639812, NAN, 0.0, NAN, -7.0,
          NAN, 0.3010299956639812, -0.12493873660829995, 1.0, 2.0, 3.0, 20.0, NAN, 308.0,
          1.9493900066449128, 2.8512583487190755, 0.17609125905568124, NAN
      },
      {
          -INFINITY, -INFINITY, NAN, INFINITY, NAN, -0.30103f, NAN, 0.0f, NAN, -7.0000005f,
          NAN, 0.30103f, -0.12493874f, 1.0f, 2.0000002f, 3.0000002f, 20.000002f, NAN, INFINITY,
          1.94939f, 2.8512583f, 0.17609127f, NAN
      }
    },
    { OP_LOG1P,
      {
          -0.0, 0.0, NAN, INFINITY, NAN, 0.4054651081081644, -0.6931471805599453,
          0.6931471805599453, -INFINITY, 9.999999500000033e-08, NAN, 1.0986122886681098,
          0.5596157879354227, 2.3978952727983707, 4.61512051684126, 6.90875477931522,
          46.051701859880914, NAN, 709.1962086421661, 4.499809670330265, 6.566672429803241,
          0.9162907318741551, -6.907755278982136
      },
      {
          -0.0f, 0.0f, NAN, INFINITY, NAN, 0.40546513f, -0.6931472f, 0.6931472f, -INFINITY,
          9.9999994e-08f, NAN, 1.0986123f, 0.5596158f, 2.3978953f, 4.6151204f, 6.908755f,
          46.0517f, NAN, INFINITY, 4.4998097f, 6.5666723f, 0.91629076f, -6.9077682f
      }
    },
};
#define NP 30
static const double pair_x[NP] = {
    7.0, -7.0, 7.0, -7.0, 3.0, -3.0, 3.0, -3.0, 0.0, -0.0, 0.0, -0.0, 5.0, -5.0, 0.0, 5.0,
    INFINITY, -INFINITY, 2.0, -2.0, 2.0, -2.0, NAN, 1.0, 7.5, -7.5, -1e-20, 0.5, 1e+300, -0.0
};
static const double pair_y[NP] = {
    2.0, 2.0, -2.0, -2.0, -1.0, 1.0, 1.0, -1.0, 5.0, 5.0, -5.0, -5.0, 0.0, 0.0, 0.0, -0.0, 2.0,
    2.0, INFINITY, INFINITY, -INFINITY, -INFINITY, 1.0, NAN, 2.0, 2.0, 1.0, 0.1, 1e-300, -0.0
};
static const PairCase pair_cases[] = {
    { OP_ADD,
      {
          9.0, -5.0, 5.0, -9.0, 2.0, -2.0, 4.0, -4.0, 5.0, 5.0, -5.0, -5.0, 5.0, -5.0, 0.0,
          5.0, INFINITY, -INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, NAN, NAN, 9.5,
          -5.5, 1.0, 0.6, 1e+300, -0.0
      } },
    { OP_SUB,
      {
          5.0, -9.0, 9.0, -5.0, 4.0, -4.0, 2.0, -2.0, -5.0, -5.0, 5.0, 5.0, 5.0, -5.0, 0.0,
          5.0, INFINITY, -INFINITY, -INFINITY, -INFINITY, INFINITY, INFINITY, NAN, NAN, 5.5,
          -9.5, -1.0, 0.4, 1e+300, 0.0
      } },
    { OP_MUL,
      {
          14.0, -14.0, -14.0, 14.0, -3.0, -3.0, 3.0, 3.0, 0.0, -0.0, -0.0, 0.0, 0.0, -0.0, 0.0,
          -0.0, INFINITY, -INFINITY, INFINITY, -INFINITY, -INFINITY, INFINITY, NAN, NAN, 15.0,
          -15.0, -1e-20, 0.05, 1.0, 0.0
      } },
    { OP_DIV,
      {
          3.5, -3.5, -3.5, 3.5, -3.0, -3.0, 3.0, 3.0, 0.0, -0.0, -0.0, 0.0, INFINITY,
          -INFINITY, NAN, -INFINITY, INFINITY, -INFINITY, 0.0, -0.0, -0.0, 0.0, NAN, NAN, 3.75,
          -3.75, -1e-20, 5.0, INFINITY, NAN
      } },
    { OP_FLOOR_DIVIDE,
      {
          3.0, -4.0, -4.0, 3.0, -3.0, -3.0, 3.0, 3.0, 0.0, -0.0, -0.0, 0.0, INFINITY,
          -INFINITY, NAN, -INFINITY, NAN, NAN, 0.0, -1.0, -1.0, 0.0, NAN, NAN, 3.0, -4.0, -1.0,
          4.0, INFINITY, NAN
      } },
    { OP_MOD,
      {
          1.0, 1.0, -1.0, -1.0, -0.0, 0.0, 0.0, -0.0, 0.0, 0.0, -0.0, -0.0, NAN, NAN, NAN, NAN,
          NAN, NAN, 2.0, INFINITY, -INFINITY, -2.0, NAN, NAN, 1.5, 0.5, 1.0,
          0.09999999999999998, 4.891554850853602e-301, NAN
      } },
    { OP_POW,
      {
          49.0, 49.0, 0.02040816326530612, 0.02040816326530612, 0.3333333333333333, -3.0, 3.0,
          -0.3333333333333333, 0.0, -0.0, INFINITY, -INFINITY, 1.0, 1.0, 1.0, 1.0, INFINITY,
          INFINITY, INFINITY, INFINITY, 0.0, 0.0, NAN, 1.0, 56.25, 56.25, -1e-20,
          0.9330329915368074, 1.0, 1.0
      } },
    { OP_MAXIMUM,
      {
          7.0, 2.0, 7.0, -2.0, 3.0, 1.0, 3.0, -1.0, 5.0, 5.0, 0.0, -0.0, 5.0, 0.0, 0.0, 5.0,
          INFINITY, 2.0, INFINITY, INFINITY, 2.0, -2.0, NAN, NAN, 7.5, 2.0, 1.0, 0.5, 1e+300,
          -0.0
      } },
    { OP_MINIMUM,
      {
          2.0, -7.0, -2.0, -7.0, -1.0, -3.0, 1.0, -3.0, 0.0, -0.0, -5.0, -5.0, 0.0, -5.0, 0.0,
          -0.0, 2.0, -INFINITY, 2.0, -2.0, -INFINITY, -INFINITY, NAN, NAN, 2.0, -7.5, -1e-20,
          0.1, 1e-300, -0.0
      } },
    { OP_ATAN2,
      {
          1.2924966677897853, -1.2924966677897853, 1.849095985800008, -1.849095985800008,
          1.8925468811915387, -1.2490457723982544, 1.2490457723982544, -1.8925468811915387,
          0.0, -0.0, 3.141592653589793, -3.141592653589793, 1.5707963267948966,
          -1.5707963267948966, 0.0, 1.5707963267948966, 1.5707963267948966,
          -1.5707963267948966, 0.0, -0.0, 3.141592653589793, -3.141592653589793, NAN, NAN,
          1.3101939350475558, -1.3101939350475558, -1e-20, 1.373400766945016,
          1.5707963267948966, -3.141592653589793
      } },
    { OP_EQ,
      {
          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0
      } },
    { OP_NE,
      {
          1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0,
          1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0
      } },
    { OP_LT,
      {
          0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0,
          1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0
      } },
    { OP_LE,
      {
          0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0,
          1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0
      } },
    { OP_GT,
      {
          1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0,
          0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0
      } },
    { OP_GE,
      {
          1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0,
          0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0
      } },
    { OP_LOGICAL_AND,
      {
          1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0,
          1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0
      } },
    { OP_LOGICAL_OR,
      {
          1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0,
          1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0
      } },
    { OP_LOGICAL_XOR,
      {
          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0,
          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
      } },
};
/* NumPy bitwise_and/or/xor and invert on int64 */
#define NB 6
static const int64_t bit_x[NB] = { 12, -6, 5, 0, -9007199254740992, 9007199254740992 };
static const int64_t bit_y[NB] = { 10, 3, -1, -1, 1, 9007199254740991 };
static const int64_t bit_and[NB] = { 8, 2, 5, 0, 0, 0 };
static const int64_t bit_or[NB] = { 14, -5, -1, -1, -9007199254740991, 18014398509481983 };
static const int64_t bit_xor[NB] = { 6, -7, -6, -1, -9007199254740991, 18014398509481983 };
static const int64_t bit_not[NB] = { -13, 5, -6, -1, 9007199254740991, -9007199254740993 };
#define NS 10
static const double grid_s[NS] = {
    -0.0, 0.0, 1.0, -1.0, 3.0, -7.5, 0.1, INFINITY, -INFINITY, NAN
};   /* a = s[i / NS], b = s[i % NS] */
static const double grid_floordiv_f64[NS * NS] = {
    NAN, NAN, -0.0, 0.0, -0.0, 0.0, -0.0, -0.0, 0.0, NAN, NAN, NAN, 0.0, -0.0, 0.0, -0.0, 0.0,
    0.0, -0.0, NAN, -INFINITY, INFINITY, 1.0, -1.0, 0.0, -1.0, 9.0, 0.0, -1.0, NAN, INFINITY,
    -INFINITY, -1.0, 1.0, -1.0, 0.0, -10.0, -1.0, 0.0, NAN, -INFINITY, INFINITY, 3.0, -3.0,
    1.0, -1.0, 29.0, 0.0, -1.0, NAN, INFINITY, -INFINITY, -8.0, 7.0, -3.0, 1.0, -75.0, -1.0,
    0.0, NAN, -INFINITY, INFINITY, 0.0, -1.0, 0.0, -1.0, 1.0, 0.0, -1.0, NAN, -INFINITY,
    INFINITY, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, INFINITY, -INFINITY, NAN, NAN, NAN, NAN,
    NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN
};
static const float grid_floordiv_f32[NS * NS] = {
    NAN, NAN, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, -0.0f, 0.0f, NAN, NAN, NAN, 0.0f, -0.0f, 0.0f,
    -0.0f, 0.0f, 0.0f, -0.0f, NAN, -INFINITY, INFINITY, 1.0f, -1.0f, 0.0f, -1.0f, 9.0f, 0.0f,
    -1.0f, NAN, INFINITY, -INFINITY, -1.0f, 1.0f, -1.0f, 0.0f, -10.0f, -1.0f, 0.0f, NAN,
    -INFINITY, INFINITY, 3.0f, -3.0f, 1.0f, -1.0f, 29.0f, 0.0f, -1.0f, NAN, INFINITY,
    -INFINITY, -8.0f, 7.0f, -3.0f, 1.0f, -75.0f, -1.0f, 0.0f, NAN, -INFINITY, INFINITY, 0.0f,
    -1.0f, 0.0f, -1.0f, 1.0f, 0.0f, -1.0f, NAN, -INFINITY, INFINITY, NAN, NAN, NAN, NAN, NAN,
    NAN, NAN, NAN, INFINITY, -INFINITY, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
    NAN, NAN, NAN, NAN, NAN, NAN, NAN
};
static const double grid_mod_f64[NS * NS] = {
    NAN, NAN, 0.0, -0.0, 0.0, -0.0, 0.0, 0.0, -0.0, NAN, NAN, NAN, 0.0, -0.0, 0.0, -0.0, 0.0,
    0.0, -0.0, NAN, NAN, NAN, 0.0, -0.0, 1.0, -6.5, 0.09999999999999995, 1.0, -INFINITY, NAN,
    NAN, NAN, 0.0, -0.0, 2.0, -1.0, 5.551115123125783e-17, INFINITY, -1.0, NAN, NAN, NAN, 0.0,
    -0.0, 0.0, -4.5, 0.09999999999999984, 3.0, -INFINITY, NAN, NAN, NAN, 0.5, -0.5, 1.5, -0.0,
    4.163336342344337e-16, INFINITY, -7.5, NAN, NAN, NAN, 0.1, -0.9, 0.1, -7.4, 0.0, 0.1,
    -INFINITY, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
    NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN
};
static const float grid_mod_f32[NS * NS] = {
    NAN, NAN, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, 0.0f, -0.0f, NAN, NAN, NAN, 0.0f, -0.0f, 0.0f,
    -0.0f, 0.0f, 0.0f, -0.0f, NAN, NAN, NAN, 0.0f, -0.0f, 1.0f, -6.5f, 0.09999999f, 1.0f,
    -INFINITY, NAN, NAN, NAN, 0.0f, -0.0f, 2.0f, -1.0f, 1.4901161e-08f, INFINITY, -1.0f, NAN,
    NAN, NAN, 0.0f, -0.0f, 0.0f, -4.5f, 0.09999996f, 3.0f, -INFINITY, NAN, NAN, NAN, 0.5f,
    -0.5f, 1.5f, -0.0f, 1.1175871e-07f, INFINITY, -7.5f, NAN, NAN, NAN, 0.1f, -0.9f, 0.1f,
    -7.4f, 0.0f, 0.1f, -INFINITY, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
    NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
    NAN
};
#define NA 9
static const double atan2_s[NA] = {
    -0.0, 0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 2.5, -1e-30
};   /* y = s[i / NA], x = s[i % NA] */
static const double atan2_f64[NA * NA] = {
    -3.141592653589793, -0.0, -0.0, -3.141592653589793, -0.0, -3.141592653589793, NAN, -0.0,
    -3.141592653589793, 3.141592653589793, 0.0, 0.0, 3.141592653589793, 0.0, 3.141592653589793,
    NAN, 0.0, 3.141592653589793, 1.5707963267948966, 1.5707963267948966, 0.7853981633974483,
    2.356194490192345, 0.0, 3.141592653589793, NAN, 0.3805063771123649, 1.5707963267948966,
    -1.5707963267948966, -1.5707963267948966, -0.7853981633974483, -2.356194490192345, -0.0,
    -3.141592653589793, NAN, -0.3805063771123649, -1.5707963267948966, 1.5707963267948966,
    1.5707963267948966, 1.5707963267948966, 1.5707963267948966, 0.7853981633974483,
    2.356194490192345, NAN, 1.5707963267948966, 1.5707963267948966, -1.5707963267948966,
    -1.5707963267948966, -1.5707963267948966, -1.5707963267948966, -0.7853981633974483,
    -2.356194490192345, NAN, -1.5707963267948966, -1.5707963267948966, NAN, NAN, NAN, NAN, NAN,
    NAN, NAN, NAN, NAN, 1.5707963267948966, 1.5707963267948966, 1.1902899496825317,
    1.9513027039072615, 0.0, 3.141592653589793, NAN, 0.7853981633974483, 1.5707963267948966,
    -1.5707963267948966, -1.5707963267948966, -1e-30, -3.141592653589793, -0.0,
    -3.141592653589793, NAN, -4e-31, -2.356194490192345
};
static const float atan2_f32[NA * NA] = {
    -3.1415927f, -0.0f, -0.0f, -3.1415927f, -0.0f, -3.1415927f, NAN, -0.0f, -3.1415927f,
    3.1415927f, 0.0f, 0.0f, 3.1415927f, 0.0f, 3.1415927f, NAN, 0.0f, 3.1415927f, 1.5707964f,
    1.5707964f, 0.7853981f, 2.3561945f, 0.0f, 3.1415927f, NAN, 0.3805064f, 1.5707964f,
    -1.5707964f, -1.5707964f, -0.7853981f, -2.3561945f, -0.0f, -3.1415927f, NAN, -0.3805064f,
    -1.5707964f, 1.5707964f, 1.5707964f, 1.5707964f, 1.5707964f, 0.7853982f, 2.3561945f, NAN,
    1.5707964f, 1.5707964f, -1.5707964f, -1.5707964f, -1.5707964f, -1.5707964f, -0.7853982f,
    -2.3561945f, NAN, -1.5707964f, -1.5707964f, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
    1.5707964f, 1.5707964f, 1.19029f, 1.9513028f, 0.0f, 3.1415927f, NAN, 0.7853981f,
    1.5707964f, -1.5707964f, -1.5707964f, -1e-30f, -3.1415927f, -0.0f, -3.1415927f, NAN,
    -4e-31f, -2.3561945f
};
#define NR 16
static const double round_x[NR] = {
    2.675, 1.005, -2.5, 0.125, 1234.5678, -0.0, NAN, INFINITY, -INFINITY, 1e+300, 1.5e-30,
    -155.5, 25.0, 35.0, 0.3, -0.04
};
static const RoundCase round_f64_cases[] = {
    { 2,
      {
          2.68, 1.0, -2.5, 0.12, 1234.57, -0.0, NAN, INFINITY, -INFINITY, 1e+300, 0.0, -155.5,
          25.0, 35.0, 0.3, -0.04
      } },
    { 1,
      {
          2.7, 1.0, -2.5, 0.1, 1234.6, -0.0, NAN, INFINITY, -INFINITY, 1e+300, 0.0, -155.5,
          25.0, 35.0, 0.3, -0.0
      } },
    { -1,
      {
          0.0, 0.0, -0.0, 0.0, 1230.0, -0.0, NAN, INFINITY, -INFINITY, 1e+300, 0.0, -160.0,
          20.0, 40.0, 0.0, -0.0
      } },
    { -2,
      {
          0.0, 0.0, -0.0, 0.0, 1200.0, -0.0, NAN, INFINITY, -INFINITY, 1e+300, 0.0, -200.0,
          0.0, 0.0, 0.0, -0.0
      } },
    { 25,
      {
          2.675, 1.005, -2.5, 0.125, 1234.5678, -0.0, NAN, INFINITY, -INFINITY, INFINITY, 0.0,
          -155.5, 25.0, 35.0, 0.3, -0.04
      } },
    { 30,
      {
          2.675, 1.005, -2.5, 0.125, 1234.5678, -0.0, NAN, INFINITY, -INFINITY, INFINITY,
          1e-30, -155.5, 25.0, 35.0, 0.3, -0.04
      } },
    { 400, { NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN } },
    { -400,
      {
          NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN
      } },
};
static const RoundCaseF round_f32_cases[] = {
    { 2,
      {
          2.68f, 1.0f, -2.5f, 0.12f, 1234.57f, -0.0f, NAN, INFINITY, -INFINITY, INFINITY, 0.0f,
          -155.5f, 25.0f, 35.0f, 0.3f, -0.04f
      } },
    { 1,
      {
          2.7f, 1.0f, -2.5f, 0.1f, 1234.6f, -0.0f, NAN, INFINITY, -INFINITY, INFINITY, 0.0f,
          -155.5f, 25.0f, 35.0f, 0.3f, -0.0f
      } },
    { -1,
      {
          0.0f, 0.0f, -0.0f, 0.0f, 1230.0f, -0.0f, NAN, INFINITY, -INFINITY, INFINITY, 0.0f,
          -160.0f, 20.0f, 40.0f, 0.0f, -0.0f
      } },
    { -2,
      {
          0.0f, 0.0f, -0.0f, 0.0f, 1200.0f, -0.0f, NAN, INFINITY, -INFINITY, INFINITY, 0.0f,
          -200.0f, 0.0f, 0.0f, 0.0f, -0.0f
      } },
    { 25,
      {
          2.675f, 1.005f, -2.5f, 0.125f, 1234.5677f, -0.0f, NAN, INFINITY, -INFINITY, INFINITY,
          0.0f, -155.5f, 25.0f, 35.0f, 0.3f, -0.04f
      } },
    { 39, { NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN } },
    { -39, { NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN } },
};
#define NI 14
static const int64_t round_i[NI] = {
    15, 25, -15, -25, 35, 45, 149, 150, 151, -150, 250, -250, 7, 0
};
static const int64_t round_i_m1[NI] = {
    20, 20, -20, -20, 40, 40, 150, 150, 150, -150, 250, -250, 10, 0
};
static const int64_t round_i_m2[NI] = {
    0, 0, 0, 0, 0, 0, 100, 200, 200, -200, 200, -200, 0, 0
};
/* clang-format on */

/* ---------- unary math ---------- */


/* Every new SLEEF-backed op on f32 and f64 (23 elements: tails of both vector widths), and
 * the same op on numbers, against NumPy; 4 ULP is SLEEF's 1 ULP plus NumPy's own error. */
START_TEST(ew_unary_math) {
    const UnaryCase *c = &unary_cases[_i];
    const char *name = op_info[c->op].name;
    double y64[NX];
    float x32[NX], y32[NX];
    for (int i = 0; i < NX; i++) x32[i] = (float)unary_x[i];
    ck_assert_int_eq(cpu_unary(c->op, DT_F64, unary_x, y64, NX), 0);
    ck_assert_int_eq(cpu_unary(c->op, DT_F32, x32, y32, NX), 0);
    for (int i = 0; i < NX; i++) {
        ck_close_d(y64[i], c->f64[i], 4, name, i);
        ck_close_f(y32[i], c->f32[i], 4, name, i);
        ck_close_d(op_unary_number(c->op, unary_x[i]), c->f64[i], 4, name, i);
    }
}
END_TEST

/* Inputs that mix magnitudes within each vector (tiny, ordinary, past SLEEF's fast range
 * reduction, past its overflow bounds), NaN and infinities, from a fixed generator. */
static void mixed_inputs(double *x, int64_t n) {
    static const double special[] = { 0.0, -0.0, NAN, INFINITY, -INFINITY,
                                      1e300, -1e-310, 89.0, 710.0, 1e20 };
    uint64_t s = 0x9E3779B97F4A7C15u;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        double u = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;   /* [-1, 1) */
        int k = (int)((s >> 3) % 61) - 30;
        x[i] = (s >> 7) % 13 == 0 ? special[(s >> 17) % 10] : u * pow(10.0, k % 4 == 0 ? k : k / 8);
    }
}

/* The SLEEF-backed ops give the same bits on the AVX2 and AVX-512 paths, whole or in
 * chunks of any size (the static VM's fused chunks), and in place. On a processor
 * without AVX-512 both runs take the AVX2 path. */
static const OpCode vm_ops[] = { OP_EXP, OP_EXP2, OP_EXPM1, OP_LOG, OP_LOG2, OP_LOG10,
                                 OP_LOG1P, OP_SQRT, OP_SIN, OP_COS, OP_TAN, OP_ASIN,
                                 OP_ACOS, OP_ATAN, OP_SINH, OP_COSH, OP_TANH, OP_ASINH,
                                 OP_ACOSH, OP_ATANH, OP_SIGMOID };
#define NM 1037   /* 64 * 16 + 13 */

static void run_chunked(OpCode op, DType dt, const void *x, void *y, int64_t n) {
    int64_t esz = dt == DT_F32 ? 4 : 8;
    for (int64_t i = 0, len = 1; i < n; i += len, len = len % 19 + 1) {
        int64_t m = n - i < len ? n - i : len;
        ck_assert_int_eq(cpu_unary(op, dt, (const char *)x + i * esz, (char *)y + i * esz, m), 0);
    }
}

START_TEST(ew_unary_paths_agree) {
    OpCode op = vm_ops[_i];
    static double x64[NM], a64[NM], b64[NM], c64[NM];
    static float x32[NM], a32[NM], b32[NM], c32[NM];
    mixed_inputs(x64, NM);
    for (int i = 0; i < NM; i++) x32[i] = (float)x64[i];
    vm_force_avx2(1);
    ck_assert_int_eq(cpu_unary(op, DT_F64, x64, a64, NM), 0);
    ck_assert_int_eq(cpu_unary(op, DT_F32, x32, a32, NM), 0);
    vm_force_avx2(0);
    ck_assert_int_eq(cpu_unary(op, DT_F64, x64, b64, NM), 0);
    ck_assert_int_eq(cpu_unary(op, DT_F32, x32, b32, NM), 0);
    const char *name = op_info[op].name;
    ck_assert_msg(!memcmp(a64, b64, sizeof a64), "%s f64: AVX2 and AVX-512 differ", name);
    ck_assert_msg(!memcmp(a32, b32, sizeof a32), "%s f32: AVX2 and AVX-512 differ", name);
    run_chunked(op, DT_F64, x64, c64, NM);
    run_chunked(op, DT_F32, x32, c32, NM);
    ck_assert_msg(!memcmp(a64, c64, sizeof a64), "%s f64: chunks differ from the whole", name);
    ck_assert_msg(!memcmp(a32, c32, sizeof a32), "%s f32: chunks differ from the whole", name);
    vm_force_avx2(1);
    run_chunked(op, DT_F64, x64, x64, NM);   /* in place */
    run_chunked(op, DT_F32, x32, x32, NM);
    vm_force_avx2(0);
    ck_assert_msg(!memcmp(a64, x64, sizeof a64), "%s f64: in place differs", name);
    ck_assert_msg(!memcmp(a32, x32, sizeof a32), "%s f32: in place differs", name);
}
END_TEST

/* ---------- unary with a bool result, bitwise_not ---------- */

START_TEST(ew_unary_bool_results) {
    /* NumPy: isnan/isinf/isfinite/logical_not of [0, -0, 1.5, nan, inf, -inf, -2, 1e-45] */
    static const uint8_t isnan_want[8] = { 0, 0, 0, 1, 0, 0, 0, 0 };
    static const uint8_t isinf_want[8] = { 0, 0, 0, 0, 1, 1, 0, 0 };
    static const uint8_t isfinite_want[8] = { 1, 1, 1, 0, 0, 0, 1, 1 };
    static const uint8_t not_want[8] = { 1, 1, 0, 0, 0, 0, 0, 0 };
    static const OpCode ops[4] = { OP_ISNAN, OP_ISINF, OP_ISFINITE, OP_LOGICAL_NOT };
    const uint8_t *want[4] = { isnan_want, isinf_want, isfinite_want, not_want };
    const double x64[8] = { 0, -0.0, 1.5, NAN, INFINITY, -INFINITY, -2, 1e-45 };
    float x32[8];
    uint8_t y[8];
    for (int i = 0; i < 8; i++) x32[i] = (float)x64[i];
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(cpu_unary(ops[k], DT_F64, x64, y, 8), 0);
        ck_assert_mem_eq(y, want[k], 8);
        ck_assert_int_eq(cpu_unary(ops[k], DT_F32, x32, y, 8), 0);
        ck_assert_mem_eq(y, want[k], 8);
        for (int i = 0; i < 8; i++)
            ck_assert_double_eq(op_unary_number(ops[k], x64[i]), want[k][i]);
    }
    /* i64 and bool are never NaN or infinite; logical_not is x == 0 */
    const int64_t xi[5] = { 0, -1, 7, INT64_MIN, INT64_MAX };
    const uint8_t xb[5] = { 1, 0, 0, 1, 1 };
    uint8_t zeros[5] = { 0 }, ones[5] = { 1, 1, 1, 1, 1 };
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(cpu_unary(ops[k], DT_I64, xi, y, 5), 0);
        ck_assert_mem_eq(y, ops[k] == OP_ISFINITE ? ones : zeros, 5);
        ck_assert_int_eq(cpu_unary(ops[k], DT_BOOL, xb, y, 5), 0);
        ck_assert_mem_eq(y, ops[k] == OP_ISFINITE ? ones : zeros, 5);
    }
    ck_assert_int_eq(cpu_unary(OP_LOGICAL_NOT, DT_I64, xi, y, 5), 0);
    ck_assert_mem_eq(y, ((uint8_t[]){ 1, 0, 0, 0, 0 }), 5);
    ck_assert_int_eq(cpu_unary(OP_LOGICAL_NOT, DT_BOOL, xb, y, 5), 0);
    ck_assert_mem_eq(y, ((uint8_t[]){ 0, 1, 1, 0, 0 }), 5);
    /* in place on bool bytes */
    uint8_t b[5] = { 1, 0, 0, 1, 1 };
    ck_assert_int_eq(cpu_unary(OP_LOGICAL_NOT, DT_BOOL, b, b, 5), 0);
    ck_assert_mem_eq(b, ((uint8_t[]){ 0, 1, 1, 0, 0 }), 5);
}
END_TEST

/* op_unary reads a bool-result op's operand in its own dtype (no conversion to bool). */
START_TEST(ew_op_unary_bool_result) {
    Shape sh = { 1, { 3 } };
    Tensor *t = tensor_new(DT_F32, &sh);
    tensor_set(t, 0, 0.5);
    tensor_set(t, 1, NAN);
    tensor_set(t, 2, -INFINITY);
    Tensor *r = op_unary(OP_ISNAN, t);
    ck_assert_int_eq(r->dtype, DT_BOOL);
    ck_assert_mem_eq(r->data, ((uint8_t[]){ 0, 1, 0 }), 3);
    tensor_release(r);
    OpArg in = op_arg_tensor(t);   /* into a given buffer, as the VM calls it */
    OpAttrs at = { .naxes = -1, .dtype = -1 };
    OpCall c = { OP_ISINF, 1, &in, &at };
    r = tensor_new(DT_BOOL, &sh);
    ck_assert_int_eq(op_run(&c, &r), 0);
    ck_assert_mem_eq(r->data, ((uint8_t[]){ 0, 0, 1 }), 3);
    tensor_release(r);
    tensor_release(t);
}
END_TEST

START_TEST(ew_bitwise_not) {
    /* NumPy: np.invert on int64 and bool */
    int64_t y[NB];
    ck_assert_int_eq(cpu_unary(OP_BITWISE_NOT, DT_I64, bit_x, y, NB), 0);
    ck_assert_mem_eq(y, bit_not, sizeof y);
    for (int i = 0; i < NB; i++)   /* numbers are f64: the i64 result rounded to it */
        ck_assert_double_eq(op_unary_number(OP_BITWISE_NOT, (double)bit_x[i]), (double)bit_not[i]);
    int64_t big[2] = { INT64_MIN, INT64_MAX };
    ck_assert_int_eq(cpu_unary(OP_BITWISE_NOT, DT_I64, big, big, 2), 0);
    ck_assert_int_eq(big[0], INT64_MAX);
    ck_assert_int_eq(big[1], INT64_MIN);
    uint8_t b[3] = { 1, 0, 1 }, nb[3];
    ck_assert_int_eq(cpu_unary(OP_BITWISE_NOT, DT_BOOL, b, nb, 3), 0);
    ck_assert_mem_eq(nb, ((uint8_t[]){ 0, 1, 0 }), 3);
    ck_assert(isnan(op_unary_number(OP_BITWISE_NOT, 2.5)));   /* never undefined behaviour */
    ck_assert(isnan(op_unary_number(OP_BITWISE_NOT, 1e19)));
    float f[1] = { 1 };
    ck_assert_int_eq(cpu_unary(OP_BITWISE_NOT, DT_F32, f, f, 1), -1);
    ck_assert_str_eq(op_error(), "bitwise_not is not supported for f32 tensors");
}
END_TEST

/* ---------- round(x, decimals) ---------- */


START_TEST(ew_round_decimals_float) {
    double y64[NR];
    float x32[NR], y32[NR];
    for (int i = 0; i < NR; i++) x32[i] = (float)round_x[i];
    for (size_t k = 0; k < sizeof round_f64_cases / sizeof round_f64_cases[0]; k++) {
        const RoundCase *c = &round_f64_cases[k];
        ck_assert_int_eq(cpu_round_decimals(DT_F64, round_x, y64, NR, c->decimals), 0);
        for (int i = 0; i < NR; i++)
            ck_close_d(y64[i], c->want[i], 0, "round f64", (int)c->decimals * 100 + i);
    }
    for (size_t k = 0; k < sizeof round_f32_cases / sizeof round_f32_cases[0]; k++) {
        const RoundCaseF *c = &round_f32_cases[k];
        ck_assert_int_eq(cpu_round_decimals(DT_F32, x32, y32, NR, c->decimals), 0);
        for (int i = 0; i < NR; i++)
            ck_close_f(y32[i], c->want[i], 0, "round f32", (int)c->decimals * 100 + i);
    }
    /* in place, and decimals far past any power of ten a double holds (NumPy: nan) */
    ck_assert_int_eq(cpu_round_decimals(DT_F64, y64, y64, NR, INT64_MAX), 0);
    ck_assert(isnan(y64[0]));
}
END_TEST

START_TEST(ew_round_decimals_int) {
    int64_t y[NI];
    ck_assert_int_eq(cpu_round_decimals(DT_I64, round_i, y, NI, 3), 0);   /* d >= 0: unchanged */
    ck_assert_mem_eq(y, round_i, sizeof y);
    ck_assert_int_eq(cpu_round_decimals(DT_I64, round_i, y, NI, -1), 0);
    ck_assert_mem_eq(y, round_i_m1, sizeof y);
    ck_assert_int_eq(cpu_round_decimals(DT_I64, round_i, y, NI, -2), 0);
    ck_assert_mem_eq(y, round_i_m2, sizeof y);
    /* Past 2^53 NumPy rounds through f64; TSL rounds exactly (these by Python integers),
     * half to even, and a result past i64's range wraps as i64 overflow does. */
    const int64_t big[6] = { INT64_MAX, INT64_MIN, 9007199254740993, 4999999999999999999,
                             5000000000000000001, -5000000000000000001 };
    int64_t r[6];
    ck_assert_int_eq(cpu_round_decimals(DT_I64, big, r, 6, -1), 0);
    ck_assert_mem_eq(r, ((int64_t[]){ -9223372036854775806, 9223372036854775806, 9007199254740990,
                                      5000000000000000000, 5000000000000000000,
                                      -5000000000000000000 }),
                     sizeof r);
    ck_assert_int_eq(cpu_round_decimals(DT_I64, big, r, 6, -18), 0);
    ck_assert_mem_eq(r, ((int64_t[]){ 9000000000000000000, -9000000000000000000, 0,
                                      5000000000000000000, 5000000000000000000,
                                      -5000000000000000000 }),
                     sizeof r);
    ck_assert_int_eq(cpu_round_decimals(DT_I64, big, r, 6, -20), 0);
    ck_assert_mem_eq(r, ((int64_t[6]){ 0 }), sizeof r);
    ck_assert_int_eq(cpu_round_decimals(DT_I64, big, r, 6, INT64_MIN), 0);
    ck_assert_mem_eq(r, ((int64_t[6]){ 0 }), sizeof r);
    /* bool: unchanged for d >= 0; 0 and 1 both round to 0 for d < 0 */
    uint8_t b[3] = { 1, 0, 1 }, rb[3];
    ck_assert_int_eq(cpu_round_decimals(DT_BOOL, b, rb, 3, 2), 0);
    ck_assert_mem_eq(rb, b, 3);
    ck_assert_int_eq(cpu_round_decimals(DT_BOOL, b, rb, 3, -1), 0);
    ck_assert_mem_eq(rb, ((uint8_t[3]){ 0 }), 3);
}
END_TEST

/* ---------- binary ---------- */

/* Every K_BINARY/K_COMPARE op on numbers; bit-exact, but for pow and atan2 (libm) 2 ULP. */
START_TEST(ew_binary_number) {
    for (size_t k = 0; k < sizeof pair_cases / sizeof pair_cases[0]; k++) {
        const PairCase *c = &pair_cases[k];
        int ulps = c->op == OP_POW || c->op == OP_ATAN2 ? 2 : 0;
        for (int i = 0; i < NP; i++) {
            double got = op_binary_number(c->op, pair_x[i], pair_y[i]);
            ck_close_d(got, c->want[i], ulps, op_info[c->op].name, i);
        }
    }
    for (int i = 0; i < NB; i++) {   /* the operands are exact doubles; results round to f64 */
        double x = (double)bit_x[i], y = (double)bit_y[i];
        ck_assert_double_eq(op_binary_number(OP_BITWISE_AND, x, y), (double)bit_and[i]);
        ck_assert_double_eq(op_binary_number(OP_BITWISE_OR, x, y), (double)bit_or[i]);
        ck_assert_double_eq(op_binary_number(OP_BITWISE_XOR, x, y), (double)bit_xor[i]);
    }
    ck_assert(isnan(op_binary_number(OP_BITWISE_AND, 1.5, 1)));
    ck_assert(isnan(op_binary_number(OP_BITWISE_OR, 1, 9.3e18)));
}
END_TEST

/* floor_divide and mod over every pair of {-0, 0, 1, -1, 3, -7.5, 0.1, inf, -inf, nan},
 * bit for bit with NumPy (signs of zeros, x // 0, x % 0), with every stride pattern. */
START_TEST(ew_binary_floor_divide_mod) {
    double a64[NS * NS], b64[NS * NS], y64[NS * NS];
    float a32[NS * NS], b32[NS * NS], y32[NS * NS];
    for (int i = 0; i < NS * NS; i++) {
        a64[i] = grid_s[i / NS], b64[i] = grid_s[i % NS];
        a32[i] = (float)a64[i], b32[i] = (float)b64[i];
    }
    const OpCode ops[2] = { OP_FLOOR_DIVIDE, OP_MOD };
    const double *want64[2] = { grid_floordiv_f64, grid_mod_f64 };
    const float *want32[2] = { grid_floordiv_f32, grid_mod_f32 };
    for (int k = 0; k < 2; k++) {
        const char *name = op_info[ops[k]].name;
        ck_assert_int_eq(cpu_binary(ops[k], DT_F64, a64, 1, b64, 1, y64, NS * NS), 0);
        ck_assert_int_eq(cpu_binary(ops[k], DT_F32, a32, 1, b32, 1, y32, NS * NS), 0);
        for (int i = 0; i < NS * NS; i++) {
            ck_close_d(y64[i], want64[k][i], 0, name, i);
            ck_close_f(y32[i], want32[k][i], 0, name, i);
            ck_close_d(op_binary_number(ops[k], a64[i], b64[i]), want64[k][i], 0, name, i);
        }
        for (int r = 0; r < NS; r++) {   /* a scalar on the left, then on the right */
            ck_assert_int_eq(cpu_binary(ops[k], DT_F64, &grid_s[r], 0, grid_s, 1, y64, NS), 0);
            for (int i = 0; i < NS; i++)
                ck_close_d(y64[i], want64[k][r * NS + i], 0, name, r * NS + i);
            ck_assert_int_eq(cpu_binary(ops[k], DT_F32, a32, 1, &b32[r], 0, y32, NS * NS), 0);
            for (int i = 0; i < NS * NS; i++)
                if (i % NS == r) ck_close_f(y32[i], want32[k][i], 0, name, i);
        }
    }
}
END_TEST

START_TEST(ew_binary_int_floor_divide) {
    /* NumPy int64 floor_divide; INT64_MIN // -1 wraps to INT64_MIN as NumPy's does */
    const int64_t a[8] = { 7, -7, 7, -7, 6, -6, INT64_MIN, INT64_MAX };
    const int64_t b[8] = { 2, 2, -2, -2, 3, 4, -1, -1 };
    const int64_t want[8] = { 3, -4, -4, 3, 2, -2, INT64_MIN, -INT64_MAX };
    int64_t y[8];
    ck_assert_int_eq(cpu_binary(OP_FLOOR_DIVIDE, DT_I64, a, 1, b, 1, y, 8), 0);
    ck_assert_mem_eq(y, want, sizeof y);
    const int64_t two = 2;
    ck_assert_int_eq(cpu_binary(OP_FLOOR_DIVIDE, DT_I64, a, 1, &two, 0, y, 4), 0);
    ck_assert_mem_eq(y, ((int64_t[]){ 3, -4, 3, -4 }), 4 * sizeof(int64_t));
    const int64_t zero[2] = { 1, 0 };
    ck_assert_int_eq(cpu_binary(OP_FLOOR_DIVIDE, DT_I64, a, 1, zero, 1, y, 2), -1);
    ck_assert_str_eq(op_error(), "integer division by zero");
    ck_assert_int_eq(cpu_binary(OP_MOD, DT_I64, a, 1, &zero[1], 0, y, 2), -1);
    ck_assert_str_eq(op_error(), "integer modulo by zero");
}
END_TEST

/* atan2 over every pair of {-0, 0, 1, -1, inf, -inf, nan, 2.5, -1e-30} against NumPy, and
 * the AVX2 and AVX-512 paths bit for bit with each stride pattern. */
START_TEST(ew_binary_atan2) {
    double y64[NA * NA], x64[NA * NA], r64[NA * NA];
    float y32[NA * NA], x32[NA * NA], r32[NA * NA];
    for (int i = 0; i < NA * NA; i++) {
        y64[i] = atan2_s[i / NA], x64[i] = atan2_s[i % NA];
        y32[i] = (float)y64[i], x32[i] = (float)x64[i];
    }
    ck_assert_int_eq(cpu_binary(OP_ATAN2, DT_F64, y64, 1, x64, 1, r64, NA * NA), 0);
    ck_assert_int_eq(cpu_binary(OP_ATAN2, DT_F32, y32, 1, x32, 1, r32, NA * NA), 0);
    for (int i = 0; i < NA * NA; i++) {
        ck_close_d(r64[i], atan2_f64[i], 2, "atan2 f64", i);
        ck_close_f(r32[i], atan2_f32[i], 2, "atan2 f32", i);
    }
    static double a[NM], b[NM], p[NM], q[NM];
    static float af[NM], bf[NM], pf[NM], qf[NM];
    mixed_inputs(a, NM);
    for (int i = 0; i < NM; i++) b[i] = a[NM - 1 - i], af[i] = (float)a[i], bf[i] = (float)b[i];
    for (int s = 0; s < 3; s++) {   /* strides (1, 1), (0, 1), (1, 0) */
        int64_t sa = s != 1, sb = s != 2;
        vm_force_avx2(1);
        ck_assert_int_eq(cpu_binary(OP_ATAN2, DT_F64, a, sa, b, sb, p, NM), 0);
        ck_assert_int_eq(cpu_binary(OP_ATAN2, DT_F32, af, sa, bf, sb, pf, NM), 0);
        vm_force_avx2(0);
        ck_assert_int_eq(cpu_binary(OP_ATAN2, DT_F64, a, sa, b, sb, q, NM), 0);
        ck_assert_int_eq(cpu_binary(OP_ATAN2, DT_F32, af, sa, bf, sb, qf, NM), 0);
        ck_assert_msg(!memcmp(p, q, sizeof p), "atan2 f64, strides %d: paths differ", s);
        ck_assert_msg(!memcmp(pf, qf, sizeof pf), "atan2 f32, strides %d: paths differ", s);
        for (int i = 0; i < NM; i += 97)
            ck_close_d(p[i], atan2(sa ? a[i] : a[0], sb ? b[i] : b[0]), 2, "atan2 vs libm", i);
    }
    /* in place on the left operand, in chunks that are not multiples of 8 or 16 */
    memcpy(q, a, sizeof q);
    for (int64_t i = 0, len = 3; i < NM; i += len, len = len % 23 + 1) {
        int64_t m = NM - i < len ? NM - i : len;
        ck_assert_int_eq(cpu_binary(OP_ATAN2, DT_F64, q + i, 1, b + i, 1, q + i, m), 0);
    }
    ck_assert_int_eq(cpu_binary(OP_ATAN2, DT_F64, a, 1, b, 1, p, NM), 0);
    ck_assert_mem_eq(p, q, sizeof p);
}
END_TEST

START_TEST(ew_binary_logical_bitwise) {
    /* NumPy logical_and/or/xor and bitwise_and/or/xor on bool, with each stride pattern */
    const uint8_t a[4] = { 0, 0, 1, 1 }, b[4] = { 0, 1, 0, 1 }, t = 1;
    const uint8_t and_w[4] = { 0, 0, 0, 1 }, or_w[4] = { 0, 1, 1, 1 }, xor_w[4] = { 0, 1, 1, 0 };
    uint8_t y[4];
    const OpCode ops[6] = { OP_LOGICAL_AND, OP_LOGICAL_OR, OP_LOGICAL_XOR,
                            OP_BITWISE_AND, OP_BITWISE_OR, OP_BITWISE_XOR };
    const uint8_t *want[6] = { and_w, or_w, xor_w, and_w, or_w, xor_w };
    for (int k = 0; k < 6; k++) {
        ck_assert_int_eq(cpu_binary(ops[k], DT_BOOL, a, 1, b, 1, y, 4), 0);
        ck_assert_mem_eq(y, want[k], 4);
        ck_assert_int_eq(cpu_binary(ops[k], DT_BOOL, &t, 0, b, 1, y, 4), 0);   /* true (op) b */
        ck_assert_mem_eq(y, want[k] + 2, 2);
        ck_assert_int_eq(cpu_binary(ops[k], DT_BOOL, a, 1, &t, 0, y, 4), 0);   /* a (op) true */
        ck_assert_uint_eq(y[0], want[k][1]);
        ck_assert_uint_eq(y[3], want[k][3]);
    }
    /* a byte other than 0 or 1 still counts as true in the logical ops */
    const uint8_t odd[4] = { 2, 2, 0, 0 }, ones[4] = { 1, 0, 1, 0 };
    ck_assert_int_eq(cpu_binary(OP_LOGICAL_AND, DT_BOOL, odd, 1, ones, 1, y, 4), 0);
    ck_assert_mem_eq(y, ((uint8_t[]){ 1, 0, 0, 0 }), 4);
    ck_assert_int_eq(cpu_binary(OP_LOGICAL_XOR, DT_BOOL, odd, 1, ones, 1, y, 4), 0);
    ck_assert_mem_eq(y, ((uint8_t[]){ 0, 1, 1, 0 }), 4);
    /* i64 bitwise, NumPy's values */
    int64_t r[NB];
    const int64_t *bw[3] = { bit_and, bit_or, bit_xor };
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(cpu_binary(ops[3 + k], DT_I64, bit_x, 1, bit_y, 1, r, NB), 0);
        ck_assert_mem_eq(r, bw[k], sizeof r);
    }
    const int64_t m = -1;
    ck_assert_int_eq(cpu_binary(OP_BITWISE_XOR, DT_I64, bit_x, 1, &m, 0, r, NB), 0);
    ck_assert_mem_eq(r, bit_not, sizeof r);
    float f[2] = { 1, 2 };
    ck_assert_int_eq(cpu_binary(OP_BITWISE_AND, DT_F32, f, 1, f, 1, f, 2), -1);
}
END_TEST

/* ---------- i64 against a number, exactly ---------- */

/* The reference: x86-64's long double holds every i64 and every double exactly, so its
 * comparisons are the mathematical ones. */
static bool exact_cmp(OpCode op, long double a, long double b) {
    switch (op) {
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    default: return a >= b;
    }
}

START_TEST(ew_compare_i64_number) {
    ck_assert_int_ge(LDBL_MANT_DIG, 64);
    static const int64_t a[13] = { INT64_MIN, INT64_MIN + 1, -3, -2, -1, 0, 1, 2, 3,
                                   9007199254740993, INT64_MAX - 1024, INT64_MAX - 1, INT64_MAX };
    /* 2^63 and -2^63, the doubles next to them, 2^53 and 2^53 + 2, a half past 2^52 */
    static const double xs[] = { 2.5, -2.5, 2.0, -0.0, 0.5, -0.5, 9223372036854775808.0,
                                 -9223372036854775808.0, -9223372036854777856.0,
                                 9223372036854774784.0, 9007199254740992.0, 9007199254740994.0,
                                 4503599627370495.5, 1e300, -1e300, INFINITY, -INFINITY, NAN };
    static const OpCode ops[6] = { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };
    uint8_t y[13];
    for (size_t j = 0; j < sizeof xs / sizeof xs[0]; j++)
        for (int k = 0; k < 6; k++)
            for (int left = 0; left < 2; left++) {
                ck_assert_int_eq(cpu_compare_i64_number(ops[k], a, xs[j], left, y, 13), 0);
                for (int i = 0; i < 13; i++) {
                    long double ai = (long double)a[i], x = xs[j];
                    bool want = left ? exact_cmp(ops[k], x, ai) : exact_cmp(ops[k], ai, x);
                    ck_assert_msg(y[i] == want, "%s, x %s: a=%lld x=%.17g got %d",
                                  op_info[ops[k]].name, left ? "left" : "right", (long long)a[i],
                                  xs[j], y[i]);
                }
            }
    /* the brief's examples, spelled out */
    const int64_t m = INT64_MAX, two = 2;
    ck_assert_int_eq(cpu_compare_i64_number(OP_LT, &m, 9223372036854775808.0, false, y, 1), 0);
    ck_assert_uint_eq(y[0], 1);
    ck_assert_int_eq(cpu_compare_i64_number(OP_LT, &two, 2.5, false, y, 1), 0);
    ck_assert_uint_eq(y[0], 1);
    ck_assert_int_eq(cpu_compare_i64_number(OP_NE, &two, NAN, true, y, 1), 0);
    ck_assert_uint_eq(y[0], 1);
    ck_assert_int_eq(cpu_compare_i64_number(OP_ADD, &two, 1.5, false, y, 1), -1);
}
END_TEST

Suite *ew_suite(void) {
    Suite *s = suite_create("ew");
    TCase *tc = tcase_create("ew");
    tcase_add_loop_test(tc, ew_unary_math, 0, (int)(sizeof unary_cases / sizeof unary_cases[0]));
    tcase_add_loop_test(tc, ew_unary_paths_agree, 0, (int)(sizeof vm_ops / sizeof vm_ops[0]));
    tcase_add_test(tc, ew_unary_bool_results);
    tcase_add_test(tc, ew_op_unary_bool_result);
    tcase_add_test(tc, ew_bitwise_not);
    tcase_add_test(tc, ew_round_decimals_float);
    tcase_add_test(tc, ew_round_decimals_int);
    tcase_add_test(tc, ew_binary_number);
    tcase_add_test(tc, ew_binary_floor_divide_mod);
    tcase_add_test(tc, ew_binary_int_floor_divide);
    tcase_add_test(tc, ew_binary_atan2);
    tcase_add_test(tc, ew_binary_logical_bitwise);
    tcase_add_test(tc, ew_compare_i64_number);
    suite_add_tcase(s, tc);
    return s;
}
