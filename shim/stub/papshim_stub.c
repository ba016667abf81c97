/* The papshim_edge() no-op for programs run without the preload: link with
 * -lpapshim_stub; when libpapshim.so is preloaded its definition wins. */
#include "papshim.h"

void papshim_edge(double fraction) { (void)fraction; }
