defmodule NxcMixTest.Exports do
  import Nx.Defn

  defn scale(w, x), do: Nx.dot(x, w) + 1

  # The functions a project would list; the weights come from the process
  # dictionary so that a test can change them between builds.
  def functions do
    w = Process.get(:nxc_mix_test_weights, Nx.iota({3, 2}, type: :f32))
    [{:scale, &scale(w, &1), [Nx.template({4, 3}, :f32)]}]
  end

  def not_a_list, do: :oops
end

defmodule NxcMixTest do
  use ExUnit.Case, async: false
  import ExUnit.CaptureIO

  setup do
    root = Path.join(System.tmp_dir!(), "nxc-mix-test-#{System.unique_integer([:positive])}")
    File.mkdir_p!(root)
    on_exit(fn -> File.rm_rf!(root) end)
    {:ok, root: root}
  end

  defp build(entry, root, force \\ false) do
    capture_io(fn -> send(self(), {:result, Mix.Tasks.Compile.Nxc.compile_entry(entry, force, root)}) end)
    assert_received {:result, result}
    result
  end

  test "the Mix compiler builds a listed module into priv/nxc and rebuilds only what changed", %{root: root} do
    entry = {NxcMixTest.Compiled, {NxcMixTest.Exports, :functions, []}}
    dir = Path.join([root, "priv", "nxc", "nxc_mix_test_compiled"])

    assert build(entry, root) == :ok
    for file <- ~w(libnxc_mix_test_compiled.so nxc_mix_test_compiled.h nxc_mix_test_compiled.nxc graph.json),
        do: assert(File.regular?(Path.join(dir, file)), "#{file} is missing")

    so = Path.join(dir, "libnxc_mix_test_compiled.so")
    {:ok, %{mtime: built}} = File.stat(so, time: :posix)
    # Nothing changed: nothing is compiled, the library stays as it was.
    assert build(entry, root) == :noop
    assert {:ok, %{mtime: ^built}} = File.stat(so, time: :posix)

    # New weights trace to new constants: the module is rebuilt, and the
    # imported function computes with them.
    Process.put(:nxc_mix_test_weights, Nx.multiply(Nx.iota({3, 2}, type: :f32), 2))

    try do
      assert build(entry, root) == :ok
      Code.compile_string("""
      defmodule NxcMixTest.Imported do
        require Nxc
        Nxc.import_aot(#{inspect(dir)}, NxcMixTest.Compiled)
      end
      """)

      x = Nx.iota({4, 3}, type: :f32)
      want = NxcMixTest.Exports.scale(Nx.multiply(Nx.iota({3, 2}, type: :f32), 2), x)
      assert apply(NxcMixTest.Imported, :scale, [x]) == want
      assert build(entry, root) == :noop
      # --force rebuilds; other options (here :cpu) are part of what is compared.
      assert build(entry, root, true) == :ok
      with_cpu = {NxcMixTest.Compiled, {NxcMixTest.Exports, :functions, []}, cpu: "x86-64"}
      assert build(with_cpu, root) == :ok
      assert build(with_cpu, root) == :noop
    after
      Process.delete(:nxc_mix_test_weights)
    end
  end

  test "the output directory is the entry's :output, relative to the project", %{root: root} do
    entry = {NxcMixTest.Elsewhere, {NxcMixTest.Exports, :functions, []}, output: "out/here"}
    assert build(entry, root) == :ok
    assert File.regular?(Path.join([root, "out", "here", "libnxc_mix_test_elsewhere.so"]))
  end

  test "bad entries are Mix errors that say what is expected", %{root: root} do
    assert_raise Mix.Error, ~r/expected \{module, \{m, f, args\}\}/, fn -> build({NxcMixTest.X, :functions}, root) end

    assert_raise Mix.Error, ~r/NxcMixTest.NotCompiled is not compiled.*Mix.compilers\(\) \+\+ \[:nxc\]/, fn ->
      build({NxcMixTest.X, {NxcMixTest.NotCompiled, :functions, []}}, root)
    end

    assert_raise Mix.Error, ~r/NxcMixTest.Exports.nope\/0 is undefined/, fn ->
      build({NxcMixTest.X, {NxcMixTest.Exports, :nope, []}}, root)
    end

    assert_raise ArgumentError, ~r/expected a non-empty list of \{name, fun, templates\}, got: :oops/, fn ->
      build({NxcMixTest.X, {NxcMixTest.Exports, :not_a_list, []}}, root)
    end
  end

  test "import_aot of a file that is not a module description is an error that names it", %{root: root} do
    File.write!(Path.join(root, "broken.nxc"), "not a term")

    assert_raise ArgumentError, ~r/broken.nxc is not a module description written by Nxc.export_aot/, fn ->
      Nxc.AOT.read!(root, "broken")
    end

    File.write!(Path.join(root, "future.nxc"), :erlang.term_to_binary(%{format: 2}))
    assert_raise ArgumentError, ~r/future.nxc has format 2; this Nxc reads format 1/, fn -> Nxc.AOT.read!(root, "future") end
  end

  test "mix nxc.export writes a module once", %{root: root} do
    dir = Path.join(root, "exported")

    capture_io(fn ->
      Mix.Tasks.Nxc.Export.run(["NxcMixTest.Once", "NxcMixTest.Exports.functions", dir])
    end)

    assert File.regular?(Path.join(dir, "libnxc_mix_test_once.so"))
    assert File.regular?(Path.join(dir, "nxc_mix_test_once.nxc"))

    assert_raise Mix.Error, ~r/usage: mix nxc.export MODULE FUNCTIONS_FUN DIR/, fn -> Mix.Tasks.Nxc.Export.run(["One"]) end

    assert_raise Mix.Error, ~r/NxcMixTest.Exports.missing\/0 is undefined/, fn ->
      Mix.Tasks.Nxc.Export.run(["NxcMixTest.Once", "NxcMixTest.Exports.missing", dir])
    end
  end

  # The seeds' story in two Mix projects: the first trains a small classifier
  # with compiler: Nxc (grad inside) and exports its predict with the Mix
  # compiler at `mix compile`; the second, where no nxc can run, imports
  # the module and predicts. Both print their predictions.
  @tag timeout: 300_000
  test "train with Nxc, export at mix compile, import in another project without nxc", %{root: root} do
    exporter = Path.join(root, "exporter")
    importer = Path.join(root, "importer")
    package = Path.expand("..", __DIR__)

    File.mkdir_p!(Path.join(exporter, "lib"))
    File.write!(Path.join(exporter, "mix.exs"), """
    defmodule Story.Exporter.MixProject do
      use Mix.Project

      def project do
        [
          app: :nxc_story_exporter,
          version: "0.1.0",
          compilers: Mix.compilers() ++ [:nxc],
          deps: [{:nxc, path: #{inspect(package)}}],
          nxc: [{Story.Classifier, {Story.Train, :exports, []}}]
        ]
      end
    end
    """)

    File.write!(Path.join([exporter, "lib", "train.ex"]), """
    defmodule Story.Train do
      import Nx.Defn

      defn predict({w1, b1, w2, b2}, x) do
        h = Nx.tanh(Nx.dot(x, w1) + b1)
        Nx.exp(Nx.dot(h, w2) + b2) |> then(&(&1 / Nx.sum(&1, axes: [1], keep_axes: true)))
      end

      defn loss(params, x, y), do: -Nx.mean(Nx.sum(y * Nx.log(predict(params, x)), axes: [1]))

      defn step(params, x, y) do
        {w1, b1, w2, b2} = params
        {g1, gb1, g2, gb2} = grad(params, &loss(&1, x, y))
        {w1 - 0.5 * g1, b1 - 0.5 * gb1, w2 - 0.5 * g2, b2 - 0.5 * gb2}
      end

      # Two clusters in 8 dimensions, labels one-hot.
      def data do
        key = Nx.Random.key(7)
        {noise, _} = Nx.Random.normal(key, 0.0, 0.3, shape: {64, 8}, type: :f32)
        labels = Nx.remainder(Nx.iota({64}), 2)
        centers = Nx.select(Nx.new_axis(labels, 1) |> Nx.broadcast({64, 8}), 1.0, -1.0)
        {Nx.add(noise, centers), Nx.equal(Nx.new_axis(labels, 1), Nx.iota({1, 2})) |> Nx.as_type(:f32)}
      end

      def trained do
        key = Nx.Random.key(1)
        {w1, key} = Nx.Random.normal(key, 0.0, 0.3, shape: {8, 16}, type: :f32)
        {w2, _} = Nx.Random.normal(key, 0.0, 0.3, shape: {16, 2}, type: :f32)
        params = {w1, Nx.broadcast(0.0, {16}), w2, Nx.broadcast(0.0, {2})}
        {x, y} = data()
        step = Nx.Defn.jit(&step/3, compiler: Nxc)
        Enum.reduce(1..30, params, fn _, p -> step.(p, x, y) end)
      end

      def exports do
        params = trained()
        :persistent_term.put(:story_params, params)
        [{:predict, &predict(params, &1), [Nx.template({64, 8}, :f32)]}]
      end
    end
    """)

    File.mkdir_p!(Path.join(importer, "lib"))
    File.write!(Path.join(importer, "mix.exs"), """
    defmodule Story.Importer.MixProject do
      use Mix.Project

      def project do
        [app: :nxc_story_importer, version: "0.1.0", deps: [{:nxc, path: #{inspect(package)}}]]
      end
    end
    """)

    File.write!(Path.join([importer, "lib", "classifier.ex"]), """
    defmodule Story.Classifier do
      require Nxc
      Nxc.import_aot(#{inspect(Path.join([exporter, "priv", "nxc", "story_classifier"]))}, Story.Classifier)
    end
    """)

    mix = System.find_executable("mix")
    env = [{"MIX_ENV", "test"}]

    {out, status} =
      System.cmd(mix, ["run", "-e", """
      Mix.Task.run("compile")
      {x, y} = Story.Train.data()
      params = :persistent_term.get(:story_params, nil) || Story.Train.trained()
      p = Story.Train.predict(params, x)
      accuracy = Nx.equal(Nx.argmax(p, axis: 1), Nx.argmax(y, axis: 1)) |> Nx.mean() |> Nx.to_number()
      IO.puts("ACCURACY " <> Float.to_string(accuracy))
      IO.puts("PREDICTIONS " <> Base.encode64(Nx.to_binary(p)))
      File.write!("x.bin", Nx.to_binary(x))
      """], cd: exporter, env: env, stderr_to_stdout: true)

    assert status == 0, out
    assert out =~ "Compiled Story.Classifier with nxc into priv/nxc/story_classifier"
    # Run alone, the compiler finds the project's modules itself; nothing changed.
    {out_alone, 0} = System.cmd(mix, ["compile.nxc"], cd: exporter, env: env, stderr_to_stdout: true)
    refute out_alone =~ "Compiled Story.Classifier"
    [_, accuracy] = Regex.run(~r/ACCURACY (\S+)/, out)
    assert String.to_float(accuracy) >= 0.95, "training with compiler: Nxc did not learn: #{out}"
    [_, want] = Regex.run(~r/PREDICTIONS (\S+)/, out)

    # The importer: no nxc anywhere (an nxc it tried to run would fail), and
    # no C compiler, in a build of its own: the package's NIF is not built,
    # and the module runs through its own.
    path = System.get_env("PATH") |> String.split(":") |> Enum.reject(&File.exists?(Path.join(&1, "nxc"))) |> Enum.join(":")
    x_path = Path.join(exporter, "x.bin")
    importer_env = [{"NXC", "/nonexistent/nxc"}, {"PATH", path}, {"CC", "/nonexistent/cc"},
                    {"MIX_BUILD_PATH", Path.join(root, "importer_build")}]

    {out, status} =
      System.cmd(mix, ["run", "-e", """
      x = Nx.from_binary(File.read!(#{inspect(x_path)}), :f32) |> Nx.reshape({64, 8})
      IO.puts("PREDICTIONS " <> Base.encode64(Nx.to_binary(Story.Classifier.predict(x))))
      """], cd: importer, env: env ++ importer_env, stderr_to_stdout: true)

    assert status == 0, out
    assert out =~ "no C compiler (/nonexistent/cc): the package's NIF is not built"
    [_, got] = Regex.run(~r/PREDICTIONS (\S+)/, out)
    got = Nx.from_binary(Base.decode64!(got), :f32)
    want = Nx.from_binary(Base.decode64!(want), :f32)
    assert Nx.all_close(got, want, atol: 1.0e-6) |> Nx.to_number() == 1
  end
end
