/* beam_nif.c - a module compiled by nxc as its own Erlang NIF library.
 *
 * `nxc aot --nif MODULE` links this file into the module's shared object, so
 * that the BEAM loads the object itself (erlang:load_nif/2 from MODULE) and
 * calls its functions with no other native code: no C compiler, no loader
 * NIF and no dlopen on the machine that runs it (a board). nxc defines
 *
 *   nxc_nif_module_name      the Erlang module, as "Elixir.MNIST.Compiled"
 *   nxc_nif_functions[]      per function: its C name, FN_packed,
 *                            FN_packed_layout and FN_workspace_size
 *   nxc_nif_function_count
 *
 * and the NIF functions MODULE gets are
 *
 *   '__nxc_call__'(Name, Inputs)       -> {ok, [Binary]} | {error, Reason}
 *   '__nxc_call_dirty__'(Name, Inputs) -> the same, on a dirty CPU scheduler
 *
 * Name is the function's C name (a binary), Inputs its input tensors'
 * bytes in order. Every argument is checked against the function's layout
 * before it runs (badarg otherwise): a NIF never crashes the VM. Memory comes
 * from the BEAM (enif_alloc), so the object needs nothing from libc.
 */
#define nif_init nxc_nif_entry /* until ERL_NIF_INIT below has defined it */
#include <erl_nif.h>

#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char *name;
  int (*packed)(void **);
  const uint64_t *layout; /* inputs, outputs, then the bytes of each */
  size_t (*workspace_size)(void);
} NxcNifFunction;

extern const char nxc_nif_module_name[];
extern const NxcNifFunction nxc_nif_functions[];
extern const uint32_t nxc_nif_function_count;

#define WORKSPACE_ALIGN 64

static ERL_NIF_TERM error_tuple(ErlNifEnv *env, const char *reason) {
  return enif_make_tuple2(env, enif_make_atom(env, "error"), enif_make_string(env, reason, ERL_NIF_LATIN1));
}

static const NxcNifFunction *find_function(const ErlNifBinary *name) {
  for (uint32_t f = 0; f < nxc_nif_function_count; ++f) {
    const char *n = nxc_nif_functions[f].name;
    size_t i = 0;
    while (i < name->size && n[i] && n[i] == (char)name->data[i]) ++i;
    if (i == name->size && !n[i]) return &nxc_nif_functions[f];
  }
  return NULL;
}

static const char *status_text(int status) {
  switch (status) {
  case 1: return "a NULL argument";
  case 2: return "a bad workspace";
  case 3: return "this CPU supports none of the module's variants";
  default: return "an unknown status";
  }
}

static ERL_NIF_TERM call(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ErlNifBinary name;
  unsigned count;
  if (!enif_inspect_binary(env, argv[0], &name) || !enif_get_list_length(env, argv[1], &count))
    return enif_make_badarg(env);
  const NxcNifFunction *fn = find_function(&name);
  if (!fn) return error_tuple(env, "the module has no such function");
  uint64_t inputs = fn->layout[0], outputs = fn->layout[1];
  if (count != inputs) return enif_make_badarg(env);

  size_t workspace_bytes = fn->workspace_size();
  void **args = enif_alloc((inputs + outputs + 1) * sizeof(void *));
  ErlNifBinary *results = enif_alloc((outputs + 1) * sizeof(ErlNifBinary));
  void *workspace = enif_alloc(workspace_bytes + WORKSPACE_ALIGN);
  if (!args || !results || !workspace) {
    if (args) enif_free(args);
    if (results) enif_free(results);
    if (workspace) enif_free(workspace);
    return error_tuple(env, "out of memory");
  }
  int badarg = 0;
  const char *failure = NULL;
  ERL_NIF_TERM head, tail = argv[1];
  for (uint64_t i = 0; i < inputs; ++i) {
    ErlNifBinary bin;
    if (!enif_get_list_cell(env, tail, &head, &tail) || !enif_inspect_binary(env, head, &bin) ||
        bin.size != fn->layout[2 + i]) {
      badarg = 1;
      break;
    }
    /* A zero-length input still needs a non-NULL pointer. */
    args[i] = bin.size ? (void *)bin.data : (void *)&args[i];
  }
  uint64_t made = 0;
  for (; !badarg && made < outputs; ++made) {
    uint64_t bytes = fn->layout[2 + inputs + made];
    if (!enif_alloc_binary(bytes, &results[made])) {
      failure = "out of memory";
      break;
    }
    args[inputs + made] = bytes ? (void *)results[made].data : (void *)&results[made];
  }
  args[inputs + outputs] =
      (void *)(((uintptr_t)workspace + WORKSPACE_ALIGN - 1) & ~(uintptr_t)(WORKSPACE_ALIGN - 1));
  if (!badarg && !failure) {
    int status = fn->packed(args);
    if (status != 0) failure = status_text(status);
  }
  ERL_NIF_TERM answer;
  if (badarg || failure) {
    for (uint64_t i = 0; i < made; ++i) enif_release_binary(&results[i]);
    answer = badarg ? enif_make_badarg(env) : error_tuple(env, failure);
  } else {
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (uint64_t i = outputs; i-- > 0;) list = enif_make_list_cell(env, enif_make_binary(env, &results[i]), list);
    answer = enif_make_tuple2(env, enif_make_atom(env, "ok"), list);
  }
  enif_free(workspace);
  enif_free(results);
  enif_free(args);
  return answer;
}

static ErlNifFunc nif_functions[] = {
    {"__nxc_call__", 2, call, 0},
    {"__nxc_call_dirty__", 2, call, ERL_NIF_DIRTY_JOB_CPU_BOUND},
};

/* Defines nxc_nif_entry (nif_init renamed above); the real nif_init below
 * gives the entry the module's name, which this file cannot spell. */
ERL_NIF_INIT(nxc_module, nif_functions, NULL, NULL, NULL, NULL)
#undef nif_init

__attribute__((visibility("default"))) ErlNifEntry *nif_init(void) {
  ErlNifEntry *entry = nxc_nif_entry();
  entry->name = nxc_nif_module_name;
  return entry;
}
