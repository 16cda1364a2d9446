# Nx's side of axon.sh: each case calls one public function of Axon's
# activations, losses, layers and metrics on random inputs (Nx.Random, key
# 11), and writes the inputs (arg0.npy, ...), the result (want.npy, or
# want.npz with leaves by path) and the --fn text with the options (fn) into a directory of its
# own.
Application.ensure_all_started(:nx)
Code.require_file("npy.exs", __DIR__)

defmodule Cases do
  # Inputs by kind: {:u, shape} uniform in [-2, 2), {:p, shape} in (0, 1),
  # {:onehot, {n, c}}, {:bin, shape} 0 or 1 as f32, {:int, shape, max} s64.
  def input({:u, shape}, key), do: Nx.Random.uniform(key, -2.0, 2.0, shape: shape)
  def input({:p, shape}, key), do: Nx.Random.uniform(key, 0.05, 0.95, shape: shape)
  def input({:bin, shape}, key) do
    {u, key} = Nx.Random.uniform(key, shape: shape)
    {Nx.greater(u, 0.5) |> Nx.as_type(:f32), key}
  end
  def input({:onehot, {n, c}}, key) do
    {i, key} = Nx.Random.randint(key, 0, c, shape: {n, 1})
    {Nx.equal(i, Nx.iota({1, c})) |> Nx.as_type(:f32), key}
  end
  def input({:int, shape, max}, key), do: Nx.Random.randint(key, 0, max, shape: shape, type: :s64)
  def input({:s32, shape, max}, key), do: Nx.Random.randint(key, 0, max, shape: shape, type: :s32)
  # A weight quantized per channel (Axon.Quantization.QTensor, a struct).
  def input({:qtensor, shape}, key) do
    {w, key} = input({:u, shape}, key)
    {Axon.Quantization.QTensor.from_tensor(w), key}
  end
  # A PRNG key (u32[2]) of its own seed; a scalar of a fixed value.
  def input({:key, seed}, key), do: {Nx.Random.key(seed), key}
  def input({:scalar, value}, key), do: {Nx.tensor(value), key}
  def input({:term, value}, key), do: {value, key}
  # A map of tensors by string key (the recurrent cells' kernels), one
  # argument; its leaves are files in key order.
  def input({:map, names, spec}, key) do
    {values, key} = Enum.map_reduce(names, key, fn _, key -> input(spec, key) end)
    {Map.new(Enum.zip(names, values)), key}
  end

  def all do
    a = Axon.Activations
    l = Axon.Losses
    y = Axon.Layers
    m = Axon.Metrics
    x = [{:u, {3, 4}}]
    acts = for f <- ~w(celu elu exp gelu hard_sigmoid hard_silu hard_tanh leaky_relu linear log_sigmoid
                       mish relu relu6 selu sigmoid silu softplus softsign tanh)a, do: {a, f, x, []}
    acts ++
      [
        {a, :celu, x, [alpha: 2.0]},
        {a, :elu, x, [alpha: 0.5]},
        {a, :leaky_relu, x, [alpha: 0.2]},
        {a, :softmax, x, []},
        {a, :softmax, [{:u, {2, 3, 4}}], [axis: 1]},
        {a, :log_softmax, x, []},
        {a, :log_sumexp, x, []},
        {a, :log_sumexp, x, [axis: 0]},
        {a, :hard_sigmoid, x, [alpha: 0.3, beta: 0.4]},
        {a, :selu, x, [alpha: 1.5, gamma: 1.1]},
        {l, :binary_cross_entropy, [{:bin, {4, 1}}, {:p, {4, 1}}], [reduction: :mean]},
        {l, :binary_cross_entropy, [{:bin, {4, 3}}, {:u, {4, 3}}], [from_logits: true]},
        {l, :categorical_cross_entropy, [{:onehot, {4, 3}}, {:p, {4, 3}}], [reduction: :sum]},
        {l, :categorical_cross_entropy, [{:onehot, {4, 3}}, {:u, {4, 3}}], [from_logits: true, reduction: :mean]},
        {l, :categorical_cross_entropy, [{:int, {4, 1}, 3}, {:p, {4, 3}}], [sparse: true]},
        {l, :categorical_hinge, [{:onehot, {4, 3}}, {:p, {4, 3}}], []},
        {l, :hinge, [{:bin, {4, 3}}, {:u, {4, 3}}], [reduction: :mean]},
        {l, :kl_divergence, [{:p, {4, 3}}, {:p, {4, 3}}], []},
        {l, :log_cosh, [{:u, {4, 3}}, {:u, {4, 3}}], []},
        {l, :mean_absolute_error, [{:u, {4, 3}}, {:u, {4, 3}}], [reduction: :sum]},
        {l, :mean_squared_error, [{:u, {4, 3}}, {:u, {4, 3}}], []},
        {l, :poisson, [{:p, {4, 3}}, {:p, {4, 3}}], []},
        {l, :soft_margin, [{:bin, {4, 3}}, {:u, {4, 3}}], []},
        {l, :cosine_similarity, [{:u, {4, 3}}, {:u, {4, 3}}], []},
        {l, :huber, [{:u, {4, 3}}, {:u, {4, 3}}], [delta: 0.5]},
        {l, :margin_ranking, [{:bin, {4}}, {{:u, {4}}, {:u, {4}}}], [margin: 0.1]},
        {y, :dense, [{:u, {2, 3}}, {:u, {3, 4}}, {:u, {4}}], []},
        {y, :bilinear, [{:u, {2, 3}}, {:u, {2, 5}}, {:u, {4, 3, 5}}, {:u, {4}}], []},
        {y, :conv, [{:u, {1, 5, 5, 2}}, {:u, {3, 3, 2, 4}}, {:u, {4}}], [padding: :same]},
        {y, :conv, [{:u, {1, 2, 6, 6}}, {:u, {4, 2, 3, 3}}, {:u, {4}}], [strides: 2, channels: :first]},
        {y, :conv_transpose, [{:u, {1, 4, 4, 2}}, {:u, {3, 3, 2, 3}}, {:u, {3}}], [strides: 2]},
        {y, :depthwise_conv, [{:u, {1, 5, 5, 2}}, {:u, {3, 3, 1, 4}}, {:u, {4}}], []},
        {y, :max_pool, [{:u, {1, 6, 6, 2}}], [kernel_size: 2]},
        {y, :avg_pool, [{:u, {1, 6, 6, 2}}], [kernel_size: 3, strides: 1, padding: :same]},
        {y, :lp_pool, [{:u, {1, 6, 6, 2}}], [kernel_size: 2, norm: 2]},
        {y, :adaptive_avg_pool, [{:u, {1, 6, 6, 2}}], [output_size: {2, 3}]},
        {y, :adaptive_max_pool, [{:u, {1, 6, 6, 2}}], [output_size: {3, 3}]},
        {y, :global_avg_pool, [{:u, {2, 4, 4, 3}}], []},
        {y, :global_max_pool, [{:u, {2, 4, 4, 3}}], [keep_axes: true]},
        {y, :global_lp_pool, [{:u, {2, 4, 4, 3}}], [norm: 2]},
        {y, :batch_norm, [{:u, {2, 3, 3}}, {:u, {3}}, {:u, {3}}, {:u, {3}}, {:p, {3}}], []},
        {y, :layer_norm, [{:u, {2, 5}}, {:u, {5}}, {:u, {5}}], []},
        {y, :group_norm, [{:u, {2, 3, 4}}, {:u, {4}}, {:u, {4}}], [num_groups: 2]},
        {y, :rms_norm, [{:u, {2, 5}}, {:u, {5}}], []},
        {y, :instance_norm, [{:u, {2, 3, 4}}, {:u, {4}}, {:u, {4}}, {:u, {4}}, {:p, {4}}], []},
        {y, :embedding, [{:int, {2, 3}, 5}, {:u, {5, 4}}], []},
        {y, :flatten, [{:u, {2, 3, 4}}], []},
        {y, :resize, [{:u, {1, 4, 4, 2}}], [size: {6, 6}]},
        {y, :resize, [{:u, {1, 4, 4, 2}}], [size: {2, 3}, method: :nearest]},
        {y, :pad, [{:u, {1, 3, 3, 2}}], [padding_config: [{1, 1}, {0, 2}], value: 0.5, channels: :last]},
        {m, :accuracy, [{:onehot, {6, 3}}, {:p, {6, 3}}], []},
        {m, :accuracy, [{:bin, {6, 1}}, {:p, {6, 1}}], []},
        {m, :precision, [{:bin, {6}}, {:p, {6}}], []},
        {m, :recall, [{:bin, {6}}, {:p, {6}}], [threshold: 0.3]},
        {m, :true_positives, [{:bin, {6}}, {:p, {6}}], []},
        {m, :false_negatives, [{:bin, {6}}, {:p, {6}}], []},
        {m, :true_negatives, [{:bin, {6}}, {:p, {6}}], []},
        {m, :false_positives, [{:bin, {6}}, {:p, {6}}], []},
        {m, :sensitivity, [{:bin, {6}}, {:p, {6}}], []},
        {m, :specificity, [{:bin, {6}}, {:p, {6}}], []},
        {m, :mean_absolute_error, [{:u, {4, 3}}, {:u, {4, 3}}], []},
        {m, :top_k_categorical_accuracy, [{:onehot, {5, 4}}, {:p, {5, 4}}], [k: 2]},
        {m, :accuracy_transform, [{:onehot, {6, 3}}, {:p, {6, 3}}, {:term, false}, {:term, false}], []},
        {m, :accuracy_transform, [{:bin, {6, 1}}, {:u, {6, 1}}, {:term, true}, {:term, false}], []},
        {l, :apply_label_smoothing, [{:onehot, {4, 3}}, {:p, {4, 3}}], [smoothing: 0.2]},
        {l, :connectionist_temporal_classification, [{{:s32, {2}, 3}, {:s32, {2, 3}, 4}}, {:p, {2, 6, 5}}], []},
        {y, :separable_conv2d, [{:u, {1, 5, 5, 2}}, {:u, {3, 1, 1, 4}}, {:u, {4}}, {:u, {1, 3, 1, 4}}, {:u, {4}}], []},
        {y, :separable_conv3d, [{:u, {1, 4, 4, 4, 2}}, {:u, {3, 1, 1, 1, 2}}, {:u, {2}}, {:u, {1, 3, 1, 1, 2}},
                                {:u, {2}}, {:u, {1, 1, 3, 1, 2}}, {:u, {2}}], [padding: :same]},
        {y, :blur_pool, [{:u, {1, 2, 6, 6}}], [channels: :first]},
        {y, :adaptive_lp_pool, [{:u, {1, 6, 6, 2}}], [output_size: {2, 3}, norm: 2]},
        {y, :dropout, [{:u, {3, 4}}, {:key, 3}], [rate: 0.5, mode: :train]},
        {y, :dropout, [{:u, {3, 4}}, {:key, 3}], [rate: 0.5]},
        {y, :spatial_dropout, [{:u, {2, 3, 4}}, {:key, 4}], [rate: 0.5, mode: :train]},
        {y, :alpha_dropout, [{:u, {3, 4}}, {:key, 5}], [rate: 0.3, mode: :train]},
        {y, :feature_alpha_dropout, [{:u, {2, 3, 4}}, {:key, 6}], [rate: 0.3, mode: :train]},
        {y, :lstm_cell, [{:u, {2, 4}}, {{:u, {2, 5}}, {:u, {2, 5}}}, {:scalar, 0},
                         {:map, ~w(wii wif wig wio), {:u, {4, 5}}}, {:map, ~w(whi whf whg who), {:u, {5, 5}}},
                         {:map, ~w(bi bf bg bo), {:u, {5}}}], []},
        {y, :gru_cell, [{:u, {2, 4}}, {:tuple1, {:u, {2, 5}}}, {:scalar, 0},
                        {:map, ~w(wir wiz win), {:u, {4, 5}}}, {:map, ~w(whr whz whn), {:u, {5, 5}}},
                        {:map, ~w(br bz bin bhn), {:u, {5}}}], []},
        # The recurrent layers Axon's compiler calls (generated by a `for`):
        # each unrolls its cell (static_unroll by default, dynamic_unroll
        # with unroll: :dynamic).
        {y, :lstm, [{:u, {2, 3, 4}}, {{:u, {2, 5}}, {:u, {2, 5}}}, {:scalar, 0},
                    {:map, ~w(wii wif wig wio), {:u, {4, 5}}}, {:map, ~w(whi whf whg who), {:u, {5, 5}}},
                    {:map, ~w(bi bf bg bo), {:u, {5}}}], [unroll: :static], ["Axon.Layers.static_unroll"]},
        {y, :lstm, [{:u, {2, 3, 4}}, {{:u, {2, 5}}, {:u, {2, 5}}}, {:scalar, 0},
                    {:map, ~w(wii wif wig wio), {:u, {4, 5}}}, {:map, ~w(whi whf whg who), {:u, {5, 5}}},
                    {:map, ~w(bi bf bg bo), {:u, {5}}}], [unroll: :dynamic], ["Axon.Layers.dynamic_unroll"]},
        {y, :gru, [{:u, {2, 3, 4}}, {:tuple1, {:u, {2, 5}}}, {:scalar, 0},
                   {:map, ~w(wir wiz win), {:u, {4, 5}}}, {:map, ~w(whr whz whn), {:u, {5, 5}}},
                   {:map, ~w(br bz bin bhn), {:u, {5}}}], [unroll: :dynamic], ["Axon.Layers.dynamic_unroll"]},
        {y, :conv_lstm, [{:u, {1, 3, 2, 5, 5}}, {{:u, {1, 1, 4, 5, 5}}, {:u, {1, 1, 4, 5, 5}}}, {:scalar, 0},
                         {:u, {16, 2, 3, 3}}, {:u, {16, 4, 3, 3}}, {:u, {16}}], [unroll: :static],
         ["Axon.Layers.static_unroll", "Axon.Layers.conv_lstm_cell"]},
        # Through Nx.Defn.jit, as nxc jit compiles it: it multiplies by a
        # reciprocal, which Nx's expressions rewrite into a division, and an
        # element at .5 from one rounds to the other side eagerly.
        {Axon.Quantization.QTensor, :from_tensor, [{:u, {4, 3}}], [], :jit},
        {Axon.Quantization.Layers, :weight_only_quantized_dense, [{:u, {2, 3}}, {:qtensor, {3, 4}}, {:u, {4}}], []}
      ]
  end

  # A tuple of input specs is one tuple argument.
  def gen({a, b}, key) when is_tuple(a) do
    {x, key} = gen(a, key)
    {y, key} = gen(b, key)
    {{x, y}, key}
  end
  def gen({:tuple1, spec}, key) do
    {x, key} = gen(spec, key)
    {{x}, key}
  end
  def gen(spec, key), do: input(spec, key)
end

Oracle.write_cases(Cases.all(), Nx.Random.key(11), &Cases.gen/2)
