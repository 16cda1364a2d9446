defmodule NxcTest.Defns do
  import Nx.Defn

  defn softmax(x), do: Nx.exp(x - Nx.reduce_max(x)) / Nx.sum(Nx.exp(x - Nx.reduce_max(x)))

  defn predict({w1, b1, w2, b2}, x) do
    h = Nx.sigmoid(Nx.dot(x, w1) + b1)
    logits = Nx.dot(h, w2) + b2
    Nx.exp(logits) / Nx.sum(Nx.exp(logits), axes: [1], keep_axes: true)
  end

  defn promote(a, b, c), do: {a + b, a * 2, a / 3, b > a, Nx.as_type(b, :s32) + c}

  defn reductions(x) do
    {Nx.sum(x, axes: [0]), Nx.product(x, axes: [1], keep_axes: true), Nx.reduce_max(x), Nx.reduce_min(x, axes: [1]),
     Nx.mean(x, axes: [0]), Nx.argmax(x, axis: 1), Nx.argmin(x, axis: 0, tie_break: :high), Nx.argmax(x),
     Nx.all(x > -10), Nx.any(x > 1.5, axes: [0])}
  end

  defn shapes(x) do
    {Nx.transpose(x), Nx.reshape(x, {3, 2}), Nx.broadcast(Nx.sum(x, axes: [1]), {4, 2}, axes: [1]),
     Nx.reverse(x, axes: [1]), Nx.concatenate([x, x * 2], axis: 1), Nx.pad(x, 0.5, [{1, 0, 0}, {0, 2, 1}]),
     Nx.slice(x, [0, 1], [2, 2]), Nx.new_axis(x, 0) |> Nx.squeeze(axes: [0])}
  end

  defn dynamic_slice(x, i), do: Nx.slice(x, [i, 0], [2, 3])

  defn selects(x, y), do: {Nx.select(x > y, x, y), Nx.clip(x, -0.5, 0.5), Nx.select(Nx.iota({2, 3}), x, 0)}

  defn math(x) do
    {Nx.exp(x), Nx.log(Nx.abs(x) + 1), Nx.sin(x), Nx.tanh(x), Nx.erf(x), Nx.sqrt(Nx.abs(x)), Nx.rsqrt(Nx.abs(x) + 1),
     Nx.floor(x), Nx.round(x), Nx.sign(x), Nx.is_nan(x / x), x ** 2, Nx.atan2(x, 1.5)}
  end

  defn integers(a, b) do
    {Nx.quotient(a, b), Nx.remainder(a, b), Nx.bitwise_and(a, b), Nx.left_shift(a, 2), Nx.max(a, b), -a,
     Nx.population_count(a)}
  end

  defn iotas, do: {Nx.iota({2, 3}), Nx.iota({2, 3}, axis: 1, type: :f32)}

  defn with_constant(x) do
    w = Nx.iota({300}, type: :f32) / 300
    small = Nx.tensor([1.0, -2.0, 3.0])
    {Nx.dot(x, w), small * 2}
  end

  defn gradient(x), do: grad(x, fn x -> Nx.sum(Nx.exp(x) * Nx.sin(x)) end)

  defn logsumexp(x), do: Nx.logsumexp(x, axes: [1])

  defn maps(%{a: a, b: b}), do: %{sum: a + b, diff: a - b}

  defn looped(x, y) do
    {_, x, _} = while {i = 0, x, y}, i < 3, do: {i + 1, x * y + 1, y}
    x
  end

  defn counted(n) do
    {i, _} = while {i = 0, n}, i < n, do: {i + 2, n}
    i
  end

  defn branches(x) do
    cond do
      Nx.sum(x) > 2 -> {x * 2, Nx.sum(x)}
      Nx.sum(x) < -2 -> {x - 1, 0.5}
      true -> {x, -1.0}
    end
  end

  defn branch(x), do: if(Nx.reduce_max(x) > 0, do: x, else: -x)

  defn random(key), do: Nx.Random.uniform_split(key, -1.0, 1.0, shape: {5})

  defn eyes(x), do: {Nx.eye(3), Nx.eye({2, 3, 3}, type: :s32) |> Nx.add(1), x * Nx.eye(4)}

  defn puts(x, y, i), do: {Nx.put_slice(x, [1, 2], y), Nx.put_slice(x, [i, 0], y)}

  defn gathers(x, idx), do: Nx.gather(x, idx)

  defn indexed(x, idx, upd), do: {Nx.indexed_add(x, idx, upd), Nx.indexed_put(x, idx, upd)}

  defn windows(x) do
    {Nx.window_sum(x, {2, 2}, strides: [1, 2], padding: [{1, 0}, {0, 1}]), Nx.window_max(x, {3, 1}, padding: :same),
     Nx.window_min(x, {2, 2}), Nx.window_product(x, {1, 2}, window_dilations: [1, 2])}
  end

  defn convs(x, k, k2) do
    {Nx.conv(x, k, strides: [2, 1], padding: [{1, 1}, {0, 2}]),
     Nx.conv(x, k2, feature_group_size: 2, input_dilation: [1, 2], kernel_dilation: [2, 1]),
     Nx.conv(Nx.transpose(x, axes: [0, 2, 3, 1]), k, input_permutation: [0, 3, 1, 2], output_permutation: [0, 3, 1, 2])}
  end

  defn sorted(x), do: {Nx.sort(x), Nx.argsort(x, direction: :desc)}

  defn unsupported(a, b), do: Nx.sign(Nx.complex(a, b))

  defn complex_math(a, b) do
    z = Nx.complex(a, b)
    {z * z, z / Nx.conjugate(z), Nx.abs(z), Nx.real(z), Nx.imag(z), Nx.phase(z), Nx.exp(z), Nx.sqrt(z), Nx.sum(z),
     Nx.dot(z, z), z * Nx.Constants.i(), Nx.as_type(a, :c64)}
  end

  defn spectra(x) do
    {Nx.fft(x), Nx.ifft(Nx.fft(x, length: 8)), Nx.fft2(Nx.reshape(x, {2, 3})), Nx.rfft(x), Nx.irfft(Nx.rfft(x)),
     Nx.fft(x, length: 24)}
  end

  defn complex_io(z, w), do: {z * w + 1, Nx.abs(z)}

  defn sub_bytes(a, u), do: {-a, Nx.abs(a), a + 1, Nx.as_type(a, :f32) * 2, Nx.sum(a), Nx.bitwise_not(u), Nx.as_type(a, :s2), Nx.dot(a, a)}

  defn f8s(a, b), do: {a * Nx.exp(b), b + Nx.sqrt(a), Nx.as_type(a, :f32), Nx.as_type(Nx.as_type(b, :f32) * 3, :f8_e4m3fn)}

  defn solves(a, b, c) do
    {Nx.LinAlg.triangular_solve(a, b), Nx.LinAlg.triangular_solve(a, c, lower: false, left_side: false),
     Nx.LinAlg.triangular_solve(a, b, transform_a: :transpose), Nx.LinAlg.solve(a, b)}
  end

  defn batched_solve(a, b), do: Nx.LinAlg.triangular_solve(a, b, left_side: false)

  defn scatters(t, source) do
    {Nx.window_scatter_max(t, source, 0.5, {2, 3}, strides: [2, 1], padding: [{0, 1}, {1, 1}]),
     Nx.window_scatter_min(t, source, 0.0, {2, 3}, strides: [2, 1], padding: [{0, 1}, {1, 1}])}
  end

  defn max_pool_grad(x), do: grad(x, fn x -> Nx.sum(Nx.window_max(x, {2, 2}, padding: :same) |> Nx.exp()) end)

  defn indexed_axes(t, i, u), do: {Nx.indexed_add(t, i, u, axes: [1]), Nx.indexed_put(t, i, u, axes: [1])}

  defn crop(x), do: Nx.pad(x, 0.0, [{-1, 2, 1}, {1, -2, 0}])

  defn custom_reductions(x) do
    {Nx.reduce(x, 1.0, [axes: [1]], fn e, acc -> acc * e + 1 end),
     Nx.reduce(x, 0.0, fn e, acc -> Nx.max(acc, Nx.abs(e)) end),
     Nx.window_reduce(x, -1.0, {2, 2}, [strides: [1, 2], padding: [{0, 1}, {1, 0}]], fn e, acc -> Nx.max(e, acc) - 0.5 end)}
  end

  defn grouped_conv_grads(x, k) do
    grad({x, k}, fn {x, k} -> Nx.sum(Nx.conv(x, k, feature_group_size: 2, padding: :same) |> Nx.sin()) end)
  end

  defn bump(state), do: %{state | iteration: state.iteration + 1}

  defn vector_sum(x, y), do: Nx.sum(x * y, axes: [0])

  defn hooked(x) do
    y = io_call(Nx.exp(x), :exp)
    {a, b} = print_value({y * 2, x}, label: "pair")
    io_call(a + b, fn t -> send(self(), {:sum, t}) end)
  end

  defn hook_in_cond(x) do
    if Nx.sum(x) > 0 do
      y = print_value(x * 2, label: "positive")
      if Nx.sum(x) > 10, do: io_call(y, :big), else: y - 1
    else
      io_call(x - 1, fn t -> send(self(), {:negative, t}) end)
    end
  end

  defn hook_in_loop(x) do
    {_, x} = while {i = 0, x}, i < 2, do: {i + 1, io_call(x * 2, :in_loop)}
    x
  end
end

defmodule NxcTest do
  use ExUnit.Case, async: false
  alias NxcTest.Defns

  setup_all do
    dir = Path.join(System.tmp_dir!(), "nxc-elixir-test-#{System.unique_integer([:positive])}")
    System.put_env("NXC_CACHE_DIR", dir)
    on_exit(fn -> File.rm_rf!(dir) end)
    :ok
  end

  defp uniform(shape, lo \\ -2.0, hi \\ 2.0, seed \\ 1) do
    {t, _} = Nx.Random.uniform(Nx.Random.key(seed), lo, hi, shape: shape, type: :f32)
    t
  end

  # Nxc's results against Nx.Defn.Evaluator's: the same containers, types,
  # shapes and names, integers equal, floats within a few ulps.
  defp assert_same(fun, args) do
    want = apply(Nx.Defn.jit(fun, compiler: Nx.Defn.Evaluator), args)
    got = apply(Nx.Defn.jit(fun, compiler: Nxc), args)
    compare(got, want)
    got
  end

  defp compare(%Nx.Tensor{vectorized_axes: [_ | _]} = got, %Nx.Tensor{} = want) do
    assert got.vectorized_axes == want.vectorized_axes
    compare(Nx.devectorize(got), Nx.devectorize(want))
  end

  defp compare(%Nx.Tensor{} = got, %Nx.Tensor{} = want) do
    assert got.vectorized_axes == want.vectorized_axes
    assert got.type == want.type
    assert got.shape == want.shape
    assert got.names == want.names

    case want.type do
      {kind, _} when kind in [:f, :c] ->
        assert Nx.all_close(got, want, rtol: 1.0e-5, atol: 1.0e-6, equal_nan: true) |> Nx.to_number() == 1,
               "got #{inspect(got)}, want #{inspect(want)}"

      _ ->
        assert Nx.to_binary(got) == Nx.to_binary(want), "got #{inspect(got)}, want #{inspect(want)}"
    end
  end

  defp compare(got, want) when is_tuple(got) and is_tuple(want) do
    assert tuple_size(got) == tuple_size(want)
    Enum.zip(Tuple.to_list(got), Tuple.to_list(want)) |> Enum.each(fn {g, w} -> compare(g, w) end)
  end

  defp compare(%{} = got, %{} = want) do
    assert Map.keys(got) == Map.keys(want)
    Enum.each(want, fn {k, w} -> compare(Map.fetch!(got, k), w) end)
  end

  test "softmax" do
    assert_same(&Defns.softmax/1, [uniform({1000})])
  end

  test "MLP predict, batch 30" do
    params = {uniform({784, 128}, -0.1, 0.1, 2), uniform({128}, -0.1, 0.1, 3), uniform({128, 10}, -0.1, 0.1, 4),
              uniform({10}, -0.1, 0.1, 5)}
    assert_same(&Defns.predict/2, [params, uniform({30, 784}, 0.0, 1.0, 6)])
  end

  test "type promotion and broadcasting" do
    assert_same(&Defns.promote/3, [Nx.iota({2, 3}, type: :s32), uniform({3}), Nx.tensor(7, type: :s64)])
    assert_same(&Defns.promote/3, [Nx.tensor([1, 2, 3], type: :u8), Nx.tensor(2.5, type: :f64), Nx.tensor([4], type: :s16)])
  end

  test "reductions" do
    assert_same(&Defns.reductions/1, [uniform({4, 5})])
    assert_same(&Defns.reductions/1, [Nx.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])])
  end

  test "shapes" do
    assert_same(&Defns.shapes/1, [uniform({2, 3})])
  end

  test "a slice at a runtime start, clamped as in Nx" do
    x = uniform({5, 3})
    for i <- [0, 2, 4, -1] do
      assert_same(&Defns.dynamic_slice/2, [x, Nx.tensor(i)])
    end
  end

  test "select and clip" do
    assert_same(&Defns.selects/2, [uniform({2, 3}), uniform({2, 3}, -2.0, 2.0, 7)])
  end

  test "element-wise math" do
    x = Nx.concatenate([uniform({64}), Nx.tensor([0.0, -0.0, 2.5, -2.5])])
    assert_same(&Defns.math/1, [x])
  end

  test "integer ops" do
    a = Nx.tensor([7, -7, 100, 5, 0], type: :s32)
    b = Nx.tensor([2, 3, -9, 5, 1], type: :s32)
    assert_same(&Defns.integers/2, [a, b])
  end

  test "iota and constants (inline and from a .npy file)" do
    assert_same(&Defns.iotas/0, [])
    assert_same(&Defns.with_constant/1, [uniform({4, 300})])
  end

  test "grad" do
    assert_same(&Defns.gradient/1, [uniform({10})])
  end

  test "an op with a default implementation (a block)" do
    assert_same(&Defns.logsumexp/1, [uniform({3, 7})])
  end

  test "maps in and out, axis names kept" do
    a = uniform({2, 2}) |> Nx.rename([:rows, :cols])
    assert_same(&Defns.maps/1, [%{a: a, b: uniform({2, 2}, -1.0, 1.0, 9)}])
  end

  test "the default compiler option" do
    x = uniform({17})
    Nx.Defn.default_options(compiler: Nxc)
    before = Nxc.compile_count()
    got = Defns.softmax(x)
    Nx.Defn.default_options(compiler: Nx.Defn.Evaluator)
    assert Nxc.compile_count() == before + 1
    compare(got, Defns.softmax(x))
  end

  test "a second call compiles nothing; new shapes compile once each" do
    f = Nx.Defn.jit(&Defns.softmax/1, compiler: Nxc)
    f.(uniform({33}))
    before = Nxc.compile_count()
    f.(uniform({33}, -1.0, 1.0, 3))
    assert Nxc.compile_count() == before
    f.(uniform({34}))
    assert Nxc.compile_count() == before + 1
    f.(uniform({34}))
    assert Nxc.compile_count() == before + 1
  end

  test "Nx.Defn.compile" do
    x = uniform({8})
    compiled = Nx.Defn.compile(&Defns.softmax/1, [Nx.template({8}, :f32)], compiler: Nxc)
    compare(compiled.(x), Defns.softmax(x))
  end

  test "while loops" do
    assert_same(&Defns.looped/2, [uniform({3}), uniform({3}, 0.5, 1.0, 8)])
    assert_same(&Defns.counted/1, [Nx.tensor(7)])
  end

  test "cond and if" do
    for x <- [Nx.tensor([1.0, 2.0]), Nx.tensor([-3.0, -1.0]), Nx.tensor([0.5, -0.25])] do
      assert_same(&Defns.branches/1, [x])
      assert_same(&Defns.branch/1, [x])
    end
  end

  test "eye, put_slice, gather, indexed_add and indexed_put" do
    assert_same(&Defns.eyes/1, [uniform({4, 4})])
    x = uniform({4, 5})
    for i <- [0, 2, 3] do
      assert_same(&Defns.puts/3, [x, uniform({2, 3}, -1.0, 1.0, 4), Nx.tensor(i)])
    end
    assert_same(&Defns.gathers/2, [x, Nx.tensor([[0, 1], [3, 4], [3, 4], [1, 0]])])
    assert_same(&Defns.indexed/3, [x, Nx.tensor([[0, 1], [3, 4], [3, 4]]), Nx.tensor([1.0, 2.0, 3.0])])
  end

  test "windows and convolutions" do
    assert_same(&Defns.windows/1, [uniform({5, 6})])
    assert_same(&Defns.convs/3, [uniform({2, 4, 7, 6}), uniform({3, 4, 3, 2}, -1.0, 1.0, 5), uniform({6, 2, 2, 3}, -1.0, 1.0, 6)])
  end

  test "sort through its default implementation" do
    assert_same(&Defns.sorted/1, [Nx.tensor([3.0, -1.0, 2.0, 2.0, 0.5])])
  end

  test "Nx.Random, bit for bit" do
    assert_same(&Defns.random/1, [Nx.Random.key(42)])
  end

  test "what Nxc does not compile yet is an error naming it" do
    a = Nx.tensor([[2.0, 0.0], [1.0, 1.0]])
    error = assert_raise Nxc.CompileError, fn -> Nx.Defn.jit(&Defns.unsupported/2, compiler: Nxc).(a, uniform({2, 2})) end
    assert error.message =~ "nxc does not compute sign on complex values yet"
    loop = assert_raise Nxc.UnsupportedError, fn -> Nx.Defn.jit(&Defns.hook_in_loop/1, compiler: Nxc).(uniform({2})) end
    assert loop.message =~ "hook (print_value, hook or io_call) inside while"
  end

  test "complex numbers" do
    assert_same(&Defns.complex_math/2, [uniform({5}, -2.0, 2.0, 11), uniform({5}, -2.0, 2.0, 12)])
    z = Nx.complex(uniform({3}, -1.0, 1.0, 13), uniform({3}, -1.0, 1.0, 14))
    w = Nx.complex(uniform({3}, -1.0, 1.0, 15), uniform({3}, -1.0, 1.0, 16)) |> Nx.as_type(:c128)
    assert_same(&Defns.complex_io/2, [z, w])
  end

  test "the discrete Fourier transforms" do
    assert_same(&Defns.spectra/1, [uniform({6}, -1.0, 1.0, 17)])
  end

  test "the sub-byte integers (Nx packs them, compiled code takes bytes)" do
    a = Nx.tensor([-8, -3, 0, 5, 7, -1, 3], type: :s4)
    u = Nx.tensor([0, 1, 2, 3, 3, 1, 2, 0, 1], type: :u2)
    assert_same(&Defns.sub_bytes/2, [a, u])
  end

  test "the 8-bit float types" do
    a = uniform({6}, 0.0, 4.0, 18) |> Nx.as_type({:f, 8})
    b = uniform({6}, -2.0, 2.0, 19) |> Nx.as_type({:f8_e4m3fn, 8})
    assert_same(&Defns.f8s/2, [a, b])
  end

  test "triangular_solve and solve, batched and on either side, through nxc's own prelude" do
    a = Nx.tensor([[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [-1.0, 0.5, 4.0]])
    a = Nx.add(a, Nx.transpose(Nx.multiply(a, 0.25)) |> Nx.multiply(Nx.tri(3, 3) |> Nx.subtract(1) |> Nx.negate()))
    assert_same(&Defns.solves/3, [a, uniform({3, 2}), uniform({2, 3}, -1.0, 1.0, 3)])
    batch = Nx.stack([a, Nx.multiply(a, 2.0)])
    assert_same(&Defns.batched_solve/2, [Nx.tril(batch), uniform({2, 4, 3})])
  end

  test "window_scatter_max/min (and the max-pool gradient they make)" do
    assert_same(&Defns.scatters/2, [Nx.tensor([[1.0, 5.0, 2.0, 5.0], [3.0, 0.0, 5.0, 1.0], [4.0, 4.0, 2.0, 0.0]]), uniform({2, 4})])
    assert_same(&Defns.max_pool_grad/1, [uniform({4, 5})])
  end

  test "indexed_add/put on some axes, and pads that crop" do
    assert_same(&Defns.indexed_axes/3, [uniform({2, 3, 2}), Nx.tensor([[0], [2], [0]]), uniform({3, 2, 2})])
    assert_same(&Defns.crop/1, [uniform({3, 4})])
  end

  test "the gradient of a feature-grouped convolution (batch-grouped convolutions)" do
    assert_same(&Defns.grouped_conv_grads/2, [uniform({3, 4, 5, 5}), uniform({6, 2, 3, 3}, -0.5, 0.5, 2)])
  end

  test "reduce and window_reduce with functions of their own, folded in Nx's order" do
    assert_same(&Defns.custom_reductions/1, [uniform({3, 4})])
  end

  test "vectorized arguments and results" do
    x = uniform({3, 4}) |> Nx.vectorize(:rows)
    got = assert_same(&Defns.vector_sum/2, [x, uniform({4})])
    assert got.vectorized_axes == [rows: 3]
    got = assert_same(&Defns.vector_sum/2, [x, uniform({2, 4}, -1.0, 1.0, 4) |> Nx.vectorize(:cols)])
    assert got.vectorized_axes == [rows: 3, cols: 2]
  end

  test "hooks run in Elixir after the call, with the values they saw" do
    x = uniform({3})

    output =
      ExUnit.CaptureIO.capture_io(fn ->
        got = Nx.Defn.jit(&Defns.hooked/1, compiler: Nxc, hooks: %{exp: &send(self(), {:exp, &1})}).(x)
        compare(got, Nx.add(Nx.multiply(Nx.exp(x), 2), x))
      end)

    assert output =~ "pair"
    assert_received {:exp, exp}
    compare(exp, Nx.exp(x))
    assert_received {:sum, sum}
    compare(sum, Nx.add(Nx.multiply(Nx.exp(x), 2), x))
    # Without the override, the named hook has no callback: nothing runs.
    ExUnit.CaptureIO.capture_io(fn -> Nx.Defn.jit(&Defns.hooked/1, compiler: Nxc).(x) end)
    refute_received {:exp, _}
  end

  test "hooks inside cond run when their branch does" do
    overrides = %{big: &send(self(), {:big, &1})}
    f = Nx.Defn.jit(&Defns.hook_in_cond/1, compiler: Nxc, hooks: overrides)

    for {x, printed, big, negative} <- [
          {Nx.tensor([1.0, 2.0]), true, false, false},
          {Nx.tensor([5.0, 6.0]), true, true, false},
          {Nx.tensor([-1.0, -2.0]), false, false, true}
        ] do
      output = ExUnit.CaptureIO.capture_io(fn -> send(self(), {:got, f.(x)}) end)
      assert (output =~ "positive") == printed
      if big, do: assert_received({:big, _}), else: refute_received({:big, _})
      if negative, do: assert_received({:negative, _}), else: refute_received({:negative, _})
      assert_received {:got, got}
      ExUnit.CaptureIO.capture_io(fn -> compare(got, Nx.Defn.jit(&Defns.hook_in_cond/1, hooks: overrides).(x)) end)
      # The Evaluator's own run sent the same messages.
      if big, do: assert_received({:big, _})
      if negative, do: assert_received({:negative, _})
    end
  end

  test "arguments with other map keys are other programs" do
    f = Nx.Defn.jit(&Defns.bump/1, compiler: Nxc)
    assert f.(%{iteration: 0, abc: 1}) == %{iteration: Nx.tensor(1), abc: Nx.tensor(1)}
    assert f.(%{iteration: 0, xyz: 1}) == %{iteration: Nx.tensor(1), xyz: Nx.tensor(1)}
  end

  test "a missing nxc is a clear error" do
    error =
      assert_raise Nxc.CompileError, fn ->
        Nx.Defn.jit(&Defns.softmax/1, compiler: Nxc, nxc: "/nonexistent/nxc", cache_dir: System.tmp_dir!() <> "/nxc-none").(uniform({5}))
      end

    assert error.message =~ "/nonexistent/nxc"
  end

  test "the NIF refuses bad arguments instead of crashing" do
    dir = Path.join(System.get_env("NXC_CACHE_DIR"), "nif")
    Nx.Defn.jit(&Defns.softmax/1, compiler: Nxc, cache_dir: dir).(uniform({6}))
    [library] = Path.wildcard(Path.join(dir, "*/lib*.so"))
    {:ok, lib} = Nxc.NIF.load(library)
    symbol = library |> Path.basename(".so") |> String.replace_prefix("lib", "")
    symbol = symbol <> "_f"
    # Both entry points, on the calling and on a dirty scheduler, check alike.
    for call <- [&Nxc.NIF.call/6, &Nxc.NIF.call_dirty/6] do
      assert_raise ArgumentError, fn -> call.(lib, symbol, [<<0::32>>], [24], [24], 0) end
      # Sizes that agree with each other but not with the module's layout.
      assert_raise ArgumentError, fn -> call.(lib, symbol, [<<0::32>>], [4], [4], 0) end
      assert_raise ArgumentError, fn -> call.(lib, symbol, [], [], [24], 0) end
      assert_raise ArgumentError, fn -> call.(lib, symbol, [:nope], [24], [24], 0) end
      assert_raise ArgumentError, fn -> call.(:nope, symbol, [], [], [], 0) end
      assert {:error, _} = call.(lib, "no_such_function", [], [], [], 0)
      x = Nx.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
      assert {:ok, [bin]} = call.(lib, symbol, [Nx.to_binary(x)], [24], [24], Nxc.NIF.workspace_size(lib, symbol))
      compare(Nx.from_binary(bin, :f32), Defns.softmax(x))
    end

    assert {:error, _} = Nxc.NIF.load("/nonexistent.so")
  end

  test "calls run on the calling or a dirty scheduler as their first calls' times decide, with the same results" do
    dir = Path.join(System.get_env("NXC_CACHE_DIR"), "short")
    f = Nx.Defn.jit(&Defns.softmax/1, compiler: Nxc, cache_dir: dir)
    x = uniform({7})
    first = f.(x)
    compare(first, Defns.softmax(x))
    [library] = Path.wildcard(Path.join(dir, "*/lib*.so"))
    symbol = (library |> Path.basename(".so") |> String.replace_prefix("lib", "")) <> "_f"
    key = {Nxc, :short_call, {symbol, [28], [28]}}
    # The first call was timed: decided (true or false), or one slow probe of three.
    assert :persistent_term.get(key) in [true, false, 1]
    # Both ways give the same bits (which one a machine picks depends on its load).
    for short <- [true, false] do
      :persistent_term.put(key, short)
      assert f.(x) == first
    end

    :persistent_term.put(key, 2)
    assert f.(x) == first
    assert :persistent_term.get(key) in [true, false]
  end
end
