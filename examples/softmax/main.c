/* main.c - calls the numerically stable softmax, compiled ahead of time by nxc.
 *
 *   nxc aot softmax.nx --fn 'MyDefn.softmax(f32[100])' --name mymod -o out/
 *   cc main.c -Iout out/libmymod.a out/libnxrt.a -o softmax_demo
 */
#include <stdio.h>

#include "mymod.h"
#include "nxrt.h"

int main(void) {
  float x[MYMOD_SOFTMAX_X_SIZE], y[MYMOD_SOFTMAX_RESULT_SIZE];
  for (int i = 0; i < MYMOD_SOFTMAX_X_SIZE; i++) x[i] = (float)(i % 10) * 0.5f;

  int status = mymod_softmax(x, y);
  if (status != NXRT_OK) {
    fprintf(stderr, "mymod_softmax failed: %s\n", nxrt_status_string(status));
    return 1;
  }
  float sum = 0.0f;
  for (int i = 0; i < MYMOD_SOFTMAX_RESULT_SIZE; i++) sum += y[i];
  printf("softmax(f32[100]) with nxc runtime %s\n", nxrt_version());
  printf("  x[0..9] = ");
  for (int i = 0; i < 10; i++) printf("%.1f ", x[i]);
  printf("\n  y[0..9] = ");
  for (int i = 0; i < 10; i++) printf("%.6f ", y[i]);
  printf("\n  sum(y)  = %.6f\n", sum);
  return 0;
}
