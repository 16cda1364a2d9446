/* nxc_nif.c - the NIF through which Elixir calls modules compiled by nxc.
 *
 * A module is a shared object from `nxc aot --packed-entries`: each function
 * exports SYMBOL_packed(void **argv), argv holding the inputs, the outputs and
 * the workspace in the order of SYMBOL_with_workspace, and
 * SYMBOL_packed_layout, {inputs, outputs, the bytes of each}. This NIF only
 * loads such objects and calls them:
 *
 *   load(Path)                         -> {ok, Library} | {error, Reason}
 *   workspace_size(Library, Symbol)    -> Bytes (SYMBOL_workspace_size())
 *   call(Library, Symbol, Inputs, InputBytes, OutputBytes, WorkspaceBytes)
 *                                      -> {ok, [Binary]} | {error, Reason}
 *   call_dirty(...)                    -> the same, on a dirty CPU scheduler
 *
 * Library is a resource (the object is closed when the last reference goes).
 * Every argument is checked before anything runs, against the module's own
 * layout: a wrong count or size, a term of the wrong kind (badarg) or a
 * symbol that does not exist (an error tuple) never crashes the VM. call runs on
 * the calling scheduler, for functions known to be short (the Elixir side
 * times a function's first call, made with call_dirty); long ones run on a
 * dirty CPU scheduler, which costs a switch of a few microseconds per call.
 */
#define _GNU_SOURCE
#include <erl_nif.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  void *handle;
} Library;

static ErlNifResourceType *library_type;

static void library_free(ErlNifEnv *env, void *object) {
  (void)env;
  Library *lib = (Library *)object;
  if (lib->handle) dlclose(lib->handle);
  lib->handle = NULL;
}

static int on_load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {
  (void)priv;
  (void)info;
  library_type = enif_open_resource_type(env, NULL, "nxc_library", library_free, ERL_NIF_RT_CREATE, NULL);
  return library_type ? 0 : 1;
}

static ERL_NIF_TERM error_tuple(ErlNifEnv *env, const char *reason) {
  return enif_make_tuple2(env, enif_make_atom(env, "error"), enif_make_string(env, reason, ERL_NIF_LATIN1));
}

/* A binary or iolist argument as a NUL-terminated string of at most `size` - 1 bytes. */
static int get_text(ErlNifEnv *env, ERL_NIF_TERM term, char *out, size_t size) {
  ErlNifBinary bin;
  if (!enif_inspect_iolist_as_binary(env, term, &bin) || bin.size + 1 > size || memchr(bin.data, 0, bin.size))
    return 0;
  memcpy(out, bin.data, bin.size);
  out[bin.size] = 0;
  return 1;
}

static ERL_NIF_TERM load(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  char path[4096];
  if (!get_text(env, argv[0], path, sizeof path)) return enif_make_badarg(env);
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return error_tuple(env, why ? why : "dlopen failed");
  }
  Library *lib = enif_alloc_resource(library_type, sizeof(Library));
  if (!lib) {
    dlclose(handle);
    return error_tuple(env, "out of memory");
  }
  lib->handle = handle;
  ERL_NIF_TERM term = enif_make_resource(env, lib);
  enif_release_resource(lib);
  return enif_make_tuple2(env, enif_make_atom(env, "ok"), term);
}

/* The sizes in a list of non-negative integers, into a malloc'ed array. */
static int get_sizes(ErlNifEnv *env, ERL_NIF_TERM list, unsigned *count, uint64_t **out) {
  if (!enif_get_list_length(env, list, count)) return 0;
  *out = calloc(*count + 1, sizeof(uint64_t));
  if (!*out) return 0;
  ERL_NIF_TERM head, tail = list;
  for (unsigned i = 0; i < *count; ++i) {
    ErlNifUInt64 v;
    if (!enif_get_list_cell(env, tail, &head, &tail) || !enif_get_uint64(env, head, &v)) {
      free(*out);
      *out = NULL;
      return 0;
    }
    (*out)[i] = v;
  }
  return 1;
}

static const char *status_text(int status) {
  switch (status) {
  case 1: return "a NULL argument";
  case 2: return "a bad workspace";
  case 3: return "this CPU supports none of the module's variants";
  case 4: return "no device";
  default: return "an unknown status";
  }
}

/* The address of SYMBOL SUFFIX in the library argv[0], SYMBOL being argv[1];
 * NULL with *bad set when the arguments are not a live library and a name. */
static void *find_symbol(ErlNifEnv *env, const ERL_NIF_TERM argv[], const char *suffix, int *bad) {
  Library *lib;
  char symbol[512];
  *bad = !enif_get_resource(env, argv[0], library_type, (void **)&lib) || !lib->handle ||
         !get_text(env, argv[1], symbol, sizeof symbol - strlen(suffix));
  if (*bad) return NULL;
  strcat(symbol, suffix);
  return dlsym(lib->handle, symbol);
}

static ERL_NIF_TERM call(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  int bad;
  int (*packed)(void **) = (int (*)(void **))find_symbol(env, argv, "_packed", &bad);
  const uint64_t *layout = bad ? NULL : (const uint64_t *)find_symbol(env, argv, "_packed_layout", &bad);
  if (bad) return enif_make_badarg(env);
  if (!packed || !layout) return error_tuple(env, "the module has no such function");

  unsigned inputs = 0, expected = 0, outputs = 0;
  uint64_t *in_bytes = NULL, *out_bytes = NULL;
  ErlNifUInt64 workspace_bytes;
  if (!enif_get_list_length(env, argv[2], &inputs) || !get_sizes(env, argv[3], &expected, &in_bytes))
    return enif_make_badarg(env);
  if (!get_sizes(env, argv[4], &outputs, &out_bytes)) {
    free(in_bytes);
    return enif_make_badarg(env);
  }
  int matches = enif_get_uint64(env, argv[5], &workspace_bytes) && expected == inputs && layout[0] == inputs &&
                layout[1] == outputs;
  for (unsigned i = 0; matches && i < inputs; ++i) matches = layout[2 + i] == in_bytes[i];
  for (unsigned i = 0; matches && i < outputs; ++i) matches = layout[2 + inputs + i] == out_bytes[i];
  if (!matches) {
    free(in_bytes);
    free(out_bytes);
    return enif_make_badarg(env);
  }

  void **args = calloc(inputs + outputs + 1, sizeof(void *));
  ErlNifBinary *results = calloc(outputs + 1, sizeof(ErlNifBinary));
  void *workspace = NULL;
  unsigned made = 0;
  const char *failure = NULL;
  int badarg = 0;
  if (!args || !results) failure = "out of memory";
  ERL_NIF_TERM head, tail = argv[2];
  for (unsigned i = 0; !failure && !badarg && i < inputs; ++i) {
    ErlNifBinary bin;
    if (!enif_get_list_cell(env, tail, &head, &tail) || !enif_inspect_binary(env, head, &bin) ||
        bin.size != in_bytes[i]) {
      badarg = 1;
      break;
    }
    /* A zero-length input still needs a non-NULL pointer. */
    args[i] = bin.size ? (void *)bin.data : (void *)&args[i];
  }
  for (unsigned i = 0; !failure && !badarg && i < outputs; ++i, ++made) {
    if (!enif_alloc_binary(out_bytes[i], &results[i])) failure = "out of memory";
    else args[inputs + i] = out_bytes[i] ? (void *)results[i].data : (void *)&results[i];
  }
  if (!failure && !badarg) {
    workspace = aligned_alloc(64, workspace_bytes ? (workspace_bytes + 63) / 64 * 64 : 64);
    if (!workspace) failure = "out of memory";
    args[inputs + outputs] = workspace;
  }
  int status = 0;
  if (!failure && !badarg) {
    status = packed(args);
    if (status != 0) failure = status_text(status);
  }
  free(workspace);
  free(args);
  free(in_bytes);
  free(out_bytes);
  ERL_NIF_TERM answer;
  if (badarg || failure) {
    for (unsigned i = 0; i < made; ++i) enif_release_binary(&results[i]);
    answer = badarg ? enif_make_badarg(env) : error_tuple(env, failure);
  } else {
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (unsigned i = outputs; i-- > 0;) list = enif_make_list_cell(env, enif_make_binary(env, &results[i]), list);
    answer = enif_make_tuple2(env, enif_make_atom(env, "ok"), list);
  }
  free(results);
  return answer;
}

static ERL_NIF_TERM workspace_size(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  int bad;
  size_t (*size)(void) = (size_t(*)(void))find_symbol(env, argv, "_workspace_size", &bad);
  if (!size) return enif_make_badarg(env);
  return enif_make_uint64(env, (ErlNifUInt64)size());
}

static ErlNifFunc functions[] = {
    {"load", 1, load, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"workspace_size", 2, workspace_size, 0},
    {"call", 6, call, 0},
    {"call_dirty", 6, call, ERL_NIF_DIRTY_JOB_CPU_BOUND},
};

ERL_NIF_INIT(Elixir.Nxc.NIF, functions, on_load, NULL, NULL, NULL)
