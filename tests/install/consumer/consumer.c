/* Calls papshim_edge() through the installed header and stub library and
 * prints which shared object the call resolved to: the stub when run alone,
 * libpapshim.so when that is preloaded (its definition wins). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include <papshim.h>

int main(void) {
  Dl_info info;
  void *definition = dlsym(RTLD_DEFAULT, "papshim_edge");
  papshim_edge(0.25);
  papshim_edge(1.0);
  if (definition == NULL || dladdr(definition, &info) == 0 || info.dli_fname == NULL) {
    fprintf(stderr, "consumer: dladdr found no object for papshim_edge\n");
    return 3;
  }
  printf("consumer: papshim_edge called twice, defined in %s\n", info.dli_fname);
  return 0;
}
