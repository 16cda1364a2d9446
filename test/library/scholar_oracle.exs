# Nx's side of scholar.sh: each case calls one public function of Scholar
# (metrics, preprocessing, statistics, models' fit) on random inputs
# (Nx.Random, key 13), and writes the inputs (arg0.npy, ...), the result
# (want.npy, or want.npz with leaves by path) and the --fn text with the
# options (fn) into a directory of its own.
Application.ensure_all_started(:nx)
Code.require_file("npy.exs", __DIR__)

defmodule Cases do
  # {:u, shape} uniform in [-2, 2), {:p, shape} in (0.05, 0.95), {:pos,
  # shape} in (0.5, 3), {:int, shape, max} s64 labels below max.
  def input({:u, shape}, key), do: Nx.Random.uniform(key, -2.0, 2.0, shape: shape)
  def input({:p, shape}, key), do: Nx.Random.uniform(key, 0.05, 0.95, shape: shape)
  def input({:pos, shape}, key), do: Nx.Random.uniform(key, 0.5, 3.0, shape: shape)
  def input({:int, shape, max}, key), do: Nx.Random.randint(key, 0, max, shape: shape, type: :s64)
  def input({:scalar, value}, key), do: {Nx.tensor(value), key}
  def input({:const, values, type}, key), do: {Nx.tensor(values, type: type), key}
  def input({:key, seed}, key), do: {Nx.Random.key(seed), key}
  def input({:tuple, specs}, key) do
    {values, key} = Enum.map_reduce(specs, key, &input/2)
    {List.to_tuple(values), key}
  end
  # A fitted model (a struct of tensors, its keep fields nil or defaults),
  # for the functions that take one.
  def input({:model, mod, specs, opts}, key) do
    {args, key} = Enum.map_reduce(specs, key, &input/2)
    {apply(mod, :fit, args ++ [opts]), key}
  end

  def all do
    r = Scholar.Metrics.Regression
    c = Scholar.Metrics.Classification
    d = Scholar.Metrics.Distance
    s = Scholar.Metrics.Similarity
    pre = Scholar.Preprocessing
    st = Scholar.Stats
    two = [{:u, {8}}, {:u, {8}}]
    pos = [{:pos, {8}}, {:pos, {8}}]
    labels = [{:int, {10}, 3}, {:int, {10}, 3}]
    bin = [{:int, {10}, 2}, {:int, {10}, 2}]
    vecs = [{:u, {5}}, {:u, {5}}]
    mats = [{:u, {4, 3}}, {:u, {4, 3}}]
    [
      {r, :mean_absolute_error, two, []},
      {r, :mean_square_error, two, []},
      {r, :mean_square_log_error, pos, []},
      {r, :mean_absolute_percentage_error, pos, []},
      {r, :mean_poisson_deviance, pos, []},
      {r, :mean_gamma_deviance, pos, []},
      {r, :r2_score, two, []},
      {r, :explained_variance_score, two, []},
      {r, :max_residual_error, two, []},
      {r, :mean_pinball_loss, two, [alpha: 0.3]},
      {r, :d2_absolute_error_score, two, []},
      {r, :d2_pinball_score, two, [alpha: 0.7]},
      {r, :mean_square_error, [{:u, {6, 2}}, {:u, {6, 2}}], [axes: [0]]},
      {c, :accuracy, labels, []},
      {c, :binary_precision, bin, []},
      {c, :binary_recall, bin, []},
      {c, :binary_sensitivity, bin, []},
      {c, :binary_specificity, bin, []},
      {c, :precision, labels, [num_classes: 3]},
      {c, :recall, labels, [num_classes: 3]},
      {c, :sensitivity, labels, [num_classes: 3]},
      {c, :specificity, labels, [num_classes: 3]},
      {c, :confusion_matrix, labels, [num_classes: 3]},
      {c, :confusion_matrix, labels, [num_classes: 3, normalize: :true]},
      {c, :balanced_accuracy_score, labels, [num_classes: 3]},
      {c, :f1_score, labels, [num_classes: 3]},
      {c, :f1_score, labels, [num_classes: 3, average: :micro]},
      {c, :zero_one_loss, labels, []},
      {c, :cohen_kappa_score, labels, [num_classes: 3]},
      {c, :brier_score_loss, [{:int, {10}, 2}, {:p, {10}}], []},
      {c, :log_loss, [{:int, {10}, 3}, {:p, {10, 3}}], [num_classes: 3]},
      {c, :top_k_accuracy_score, [{:int, {10}, 4}, {:p, {10, 4}}], [k: 2, num_classes: 4]},
      {c, :mcc, bin, []},
      {c, :auc, [{:pos, {6}}, {:pos, {6}}], []},
      {d, :euclidean, vecs, []},
      {d, :squared_euclidean, mats, [axes: [1]]},
      {d, :manhattan, vecs, []},
      {d, :chebyshev, mats, [axes: [1]]},
      {d, :minkowski, vecs, [p: 3]},
      {d, :cosine, vecs, []},
      {d, :cosine, mats, [axes: [1]]},
      {d, :hamming, [{:int, {6}, 2}, {:int, {6}, 2}], []},
      {d, :pairwise_squared_euclidean, mats, []},
      {d, :pairwise_euclidean, mats, []},
      {d, :pairwise_cosine, mats, []},
      {d, :pairwise_minkowski, mats, [p: 1]},
      {s, :jaccard, [{:int, {8}, 3}, {:int, {8}, 3}], []},
      {s, :binary_jaccard, bin, []},
      {s, :dice_coefficient, [{:int, {8}, 3}, {:int, {8}, 3}], []},
      {s, :dice_coefficient_binary, bin, []},
      {pre, :standard_scale, [{:u, {5, 3}}], []},
      {pre, :standard_scale, [{:u, {5, 3}}], [axes: [0]]},
      {pre, :max_abs_scale, [{:u, {5, 3}}], []},
      {pre, :min_max_scale, [{:u, {5, 3}}], [min_bound: -1, max_bound: 1]},
      {pre, :binarize, [{:u, {5, 3}}], [threshold: 0.2]},
      {pre, :normalize, [{:u, {5, 3}}], [norm: :manhattan]},
      {pre, :normalize, [{:u, {5, 3}}], [axes: [1]]},
      {pre, :one_hot_encode, [{:int, {6}, 4}], [num_categories: 4]},
      {pre, :ordinal_encode, [{:int, {6}, 4}], []},
      {st, :skew, [{:u, {6, 3}}], []},
      {st, :kurtosis, [{:u, {6, 3}}], [variant: :pearson]},
      {st, :correlation_matrix, [{:u, {6, 3}}], []},
      {Scholar.Metrics.Clustering, :silhouette_score, [{:u, {8, 2}}, {:int, {8}, 2}], [num_clusters: 2]},
      {Scholar.Metrics.Ranking, :dcg, [{:u, {6}}, {:u, {6}}], []},
      {Scholar.Linear.LinearRegression, :fit, [{:u, {12, 3}}, {:u, {12}}], []},
      {Scholar.Linear.RidgeRegression, :fit, [{:u, {12, 3}}, {:u, {12}}], [alpha: 0.5]},
      {Scholar.Linear.PolynomialRegression, :fit, [{:u, {12, 2}}, {:u, {12}}], [degree: 2]},
      {Scholar.Linear.BayesianRidgeRegression, :fit, [{:u, {12, 3}}, {:u, {12}}], []},
      {Scholar.NaiveBayes.Gaussian, :fit, [{:u, {12, 3}}, {:int, {12}, 2}], [num_classes: 2]},
      {Scholar.NaiveBayes.Multinomial, :fit, [{:pos, {12, 3}}, {:int, {12}, 2}], [num_classes: 2]},
      {Scholar.NaiveBayes.Bernoulli, :fit, [{:u, {12, 3}}, {:int, {12}, 2}], [num_classes: 2]},
      {Scholar.NaiveBayes.Complement, :fit, [{:pos, {12, 3}}, {:int, {12}, 2}], [num_classes: 2]},
      {Scholar.Linear.LogisticRegression, :fit, [{:u, {12, 3}}, {:int, {12}, 2}], [num_classes: 2]},
      {Scholar.Covariance.LedoitWolf, :fit, [{:u, {12, 3}}], []},
      {Scholar.Covariance.ShrunkCovariance, :fit, [{:u, {12, 3}}], []},
      {Scholar.Interpolation.Linear, :fit, [{:pos, {6}}, {:u, {6}}], []},
      {Scholar.Preprocessing.StandardScaler, :fit, [{:u, {6, 3}}], []},
      {Scholar.Preprocessing.MinMaxScaler, :fit, [{:u, {6, 3}}], []},
      {Scholar.Preprocessing.MaxAbsScaler, :fit, [{:u, {6, 3}}], []},
      {Scholar.Preprocessing.RobustScaler, :fit, [{:u, {6, 3}}], []},
      {Scholar.Preprocessing.Normalizer, :fit_transform, [{:u, {6, 3}}], []},
      {Scholar.Impute.SimpleImputer, :fit, [{:u, {6, 3}}], [strategy: :median]},
      {Scholar.Neighbors.BruteKNN, :fit, [{:u, {8, 2}}], [num_neighbors: 3]},
      # The public defn helpers the deftransforms above call with their
      # options checked.
      {r, :mean_absolute_error_n, two, []},
      {r, :d2_absolute_error_score_n, two, []},
      {r, :quantile, [{:u, {7}}, {:scalar, 0.3}], []},
      {Scholar.Manifold.TSNE, :pairwise_dist, [{:u, {5, 3}}], [metric: :squared_euclidean]},
      {Scholar.Linear.SVM, :hinge_loss, [{:u, {4, 3}}, {:p, {4, 3}}], [c: 1.0, margin: 1.0]},
      {Scholar.Neighbors.NNDescent, :in1d, [{:int, {6}, 5}, {:int, {4}, 5}], []},
      {Scholar.Neighbors.NNDescent, :heap_size, [{:tuple, [{:int, {5}, 3}, {:const, [3.0, 0.1, 0.5, 0.9, 0.0], :f32}]}], []},
      {Scholar.Neighbors.NNDescent, :min_heap_pop,
       [{:tuple, [{:const, [0, 4, 2, 7, 0], :s64}, {:const, [3.0, 0.1, 0.5, 0.9, 0.0], :f32}]}], []},
      {Scholar.Neighbors.NNDescent, :min_heap_insert,
       [{:tuple, [{:const, [0, 4, 2, 0, 0], :s64}, {:const, [2.0, 0.1, 0.5, 0.0, 0.0], :f32}]},
        {:const, 0.05, :f32}, {:const, 9, :s64}], []},
      {Scholar.Metrics.Ranking, :dcg_n, [{:u, {6}}, {:u, {6}}], [k: 3]},
      {Scholar.Decomposition.TruncatedSVD, :randomized_range_finder, [{:u, {6, 4}}, {:key, 1}],
       [size: 2, num_iter: 2]},
      {Scholar.Manifold.Trimap, :trimap_loss,
       [{:tuple, [{:u, {6, 2}}, {:const, [[0, 1, 2], [3, 4, 5], [1, 3, 5], [2, 0, 4]], :s64}, {:p, {4}}]}], []},
      {Scholar.Cluster.Hierarchical, :fit, [{:u, {6, 2}}], [linkage: :average]},
      {Scholar.Neighbors.BruteKNN, :get_batches, [{:u, {7, 2}}], [batch_size: 3, min_batch_size: nil]},
      {Scholar.Linear.PolynomialRegression, :predict,
       [{:model, Scholar.Linear.PolynomialRegression, [{:u, {12, 2}}, {:u, {12}}], [degree: 2]}, {:u, {4, 2}}], []},
      # PCA (its doctests download a dataset).
      {Scholar.Decomposition.PCA, :fit, [{:u, {10, 4}}], [num_components: 2]},
      {Scholar.Decomposition.PCA, :fit, [{:u, {10, 4}}], [num_components: 3, whiten?: true]},
      {Scholar.Decomposition.PCA, :fit_transform, [{:u, {10, 4}}], [num_components: 2]},
      {Scholar.Decomposition.PCA, :transform,
       [{:model, Scholar.Decomposition.PCA, [{:u, {10, 4}}], [num_components: 2]}, {:u, {3, 4}}], []},
      {Scholar.Decomposition.PCA, :partial_fit,
       [{:model, Scholar.Decomposition.PCA, [{:u, {10, 4}}], [num_components: 2]}, {:u, {6, 4}}], []},
      # Models' predictions from a model fitted under Nx.
      {Scholar.Linear.LinearRegression, :predict,
       [{:model, Scholar.Linear.LinearRegression, [{:u, {12, 3}}, {:u, {12}}], []}, {:u, {4, 3}}], []},
      {Scholar.Linear.RidgeRegression, :predict,
       [{:model, Scholar.Linear.RidgeRegression, [{:u, {12, 3}}, {:u, {12}}], [alpha: 0.5]}, {:u, {4, 3}}], []},
      {Scholar.Linear.LogisticRegression, :predict_probability,
       [{:model, Scholar.Linear.LogisticRegression, [{:u, {12, 3}}, {:int, {12}, 2}], [num_classes: 2]},
        {:u, {4, 3}}], []},
      {Scholar.NaiveBayes.Complement, :predict_log_probability,
       [{:model, Scholar.NaiveBayes.Complement, [{:pos, {12, 3}}, {:int, {12}, 3}], [num_classes: 3]},
        {:pos, {4, 3}}], []},
      {Scholar.NaiveBayes.Multinomial, :predict_log_probability,
       [{:model, Scholar.NaiveBayes.Multinomial, [{:pos, {12, 3}}, {:int, {12}, 3}], [num_classes: 3]},
        {:pos, {4, 3}}], []},
      {Scholar.NaiveBayes.Bernoulli, :predict_joint_log_probability,
       [{:model, Scholar.NaiveBayes.Bernoulli, [{:u, {12, 3}}, {:int, {12}, 3}], [num_classes: 3]},
        {:u, {4, 3}}], []}
    ]
  end
end

Oracle.write_cases(Cases.all(), Nx.Random.key(13), &Cases.input/2)
