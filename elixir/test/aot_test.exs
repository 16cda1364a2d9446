defmodule NxcAotTest.Defns do
  import Nx.Defn

  defn predict({w1, b1, w2, b2}, x) do
    h = Nx.sigmoid(Nx.dot(x, w1) + b1)
    logits = Nx.dot(h, w2) + b2
    Nx.exp(logits) / Nx.sum(Nx.exp(logits), axes: [1], keep_axes: true)
  end

  defn stats(x), do: {Nx.mean(x, axes: [1]), Nx.argmax(x, axis: 1)}
end

defmodule NxcAotTest do
  use ExUnit.Case, async: false
  alias NxcAotTest.Defns

  setup do
    dir = Path.join(System.tmp_dir!(), "nxc-aot-test-#{System.unique_integer([:positive])}")
    on_exit(fn -> File.rm_rf!(dir) end)
    {:ok, dir: dir}
  end

  defp uniform(shape, seed) do
    {t, _} = Nx.Random.uniform(Nx.Random.key(seed), -0.5, 0.5, shape: shape, type: :f32)
    t
  end

  defp params do
    {uniform({784, 128}, 1), uniform({128}, 2), uniform({128, 10}, 3), uniform({10}, 4)}
  end

  test "export_aot, then import_aot without nxc: the trained weights baked in", %{dir: dir} do
    params = params()

    :ok =
      Nxc.export_aot(dir, NxcAotTest.Compiled, [
        {:predict, &Defns.predict(params, &1), [Nx.template({30, 784}, :f32)]},
        {:stats, &Defns.stats/1, [Nx.template({4, 6}, :f32)]}
      ])

    for file <- ~w(libnxc_aot_test_compiled.so nxc_aot_test_compiled.h nxc_aot_test_compiled.nxc graph.json),
        do: assert(File.regular?(Path.join(dir, file)), "#{file} is missing")

    # The import needs no nxc: a missing executable would fail any compile.
    saved = System.get_env("NXC")
    System.put_env("NXC", "/nonexistent/nxc")

    try do
      Code.compile_string("""
      defmodule NxcAotTest.Imported do
        require Nxc
        Nxc.import_aot(#{inspect(dir)}, NxcAotTest.Compiled)
      end
      """)

      imported = NxcAotTest.Imported
      x = uniform({30, 784}, 5)
      got = apply(imported, :predict, [x])
      want = Defns.predict(params, x)
      assert got.shape == {30, 10}
      assert Nx.all_close(got, want, atol: 1.0e-6) |> Nx.to_number() == 1

      y = uniform({4, 6}, 6)
      {mean, arg} = apply(imported, :stats, [y])
      {want_mean, want_arg} = Defns.stats(y)
      assert Nx.all_close(mean, want_mean) |> Nx.to_number() == 1
      assert arg == want_arg

      assert_raise ArgumentError, ~r/compiled for f32\{30, 784\}/, fn -> apply(imported, :predict, [uniform({2, 784}, 7)]) end
    after
      if saved, do: System.put_env("NXC", saved), else: System.delete_env("NXC")
    end
  end

  test "a module imported under its exported name loads the library as its own NIF", %{dir: dir} do
    :ok = Nxc.export_aot(dir, NxcAotTest.OwnNif, [{:stats, &Defns.stats/1, [Nx.template({4, 6}, :f32)]}])

    Code.compile_string("""
    defmodule NxcAotTest.OwnNif do
      require Nxc
      Nxc.import_aot(#{inspect(dir)}, NxcAotTest.OwnNif)
    end
    """)

    # The library's nif_init bound __nxc_call__ and __nxc_call_dirty__ to the module.
    own = Module.concat(["NxcAotTest", "OwnNif"])
    y = uniform({4, 6}, 8)
    assert {:ok, [_, _]} = own.__nxc_call_dirty__("nxc_aot_test_own_nif_stats", [Nx.to_binary(y)])
    assert {:ok, [_, _]} = own.__nxc_call__("nxc_aot_test_own_nif_stats", [Nx.to_binary(y)])
    {mean, arg} = apply(own, :stats, [y])
    {want_mean, want_arg} = Defns.stats(y)
    assert Nx.all_close(mean, want_mean) |> Nx.to_number() == 1
    assert arg == want_arg
    # Bad arguments are refused, never run.
    assert_raise ArgumentError, fn -> own.__nxc_call__("nxc_aot_test_own_nif_stats", [<<0::32>>]) end
    assert_raise ArgumentError, fn -> own.__nxc_call__("nxc_aot_test_own_nif_stats", []) end
    assert_raise ArgumentError, fn -> own.__nxc_call__(:stats, [Nx.to_binary(y)]) end
    assert {:error, ~c"the module has no such function"} = own.__nxc_call__("other", [])
  end

  test "export_graph writes a graph that nxc aot and nxc jit compile", %{dir: dir} do
    path = Path.join(dir, "stats.json")
    :ok = Nxc.export_graph(&Defns.stats/1, [Nx.template({4, 6}, :f32)], path, name: "stats")
    nxc = System.fetch_env!("NXC")
    {_, 0} = System.cmd(nxc, ["aot", path, "-o", Path.join(dir, "out")], stderr_to_stdout: true)
    assert File.regular?(Path.join([dir, "out", "libstats.so"]))

    y = uniform({4, 6}, 8)
    npy = Path.join(dir, "y.npy")
    File.write!(npy, Nxc.Graph.npy(y))
    {out, 0} = System.cmd(nxc, ["jit", path, "--fn", "stats", npy], stderr_to_stdout: true)
    {_mean, arg} = Defns.stats(y)
    # nxc jit prints the result as Nx does: the argmax row is in it.
    assert out =~ (arg |> Nx.to_flat_list() |> Enum.join(", "))
  end

  test "export_aot refuses names that are not C identifiers", %{dir: dir} do
    assert_raise ArgumentError, fn ->
      Nxc.export_aot(dir, NxcAotTest.Bad, [{:"bad name", &Defns.stats/1, [Nx.template({4, 6}, :f32)]}])
    end
  end
end
