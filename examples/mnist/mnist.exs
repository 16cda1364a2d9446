# The MNIST network of Nx's EXLA example (exla/examples/mnist.exs): its defn
# module as Nx writes it, and plain Elixir around it that nxc passes over.
# nxc compiles the defns of this whole file; run.sh shows how.
Mix.install([{:nx, "~> 0.9"}])

defmodule MNIST do
  import Nx.Defn

  defn init_random_params do
    key = Nx.Random.key(42)
    {w1, new_key} = Nx.Random.normal(key, 0.0, 0.1, shape: {784, 128}, names: [:input, :layer])
    {b1, new_key} = Nx.Random.normal(new_key, 0.0, 0.1, shape: {128}, names: [:layer])

    {w2, new_key} =
      Nx.Random.normal(new_key, 0.0, 0.1, shape: {128, 10}, names: [:layer, :output])

    {b2, _new_key} = Nx.Random.normal(new_key, 0.0, 0.1, shape: {10}, names: [:output])
    {w1, b1, w2, b2}
  end

  defn softmax(logits) do
    Nx.exp(logits) / Nx.sum(Nx.exp(logits), axes: [:output], keep_axes: true)
  end

  defn predict({w1, b1, w2, b2}, batch) do
    batch
    |> Nx.dot(w1)
    |> Nx.add(b1)
    |> Nx.sigmoid()
    |> Nx.dot(w2)
    |> Nx.add(b2)
    |> softmax()
  end

  defn accuracy({w1, b1, w2, b2}, batch_images, batch_labels) do
    Nx.mean(
      Nx.equal(
        Nx.argmax(batch_labels, axis: :output),
        Nx.argmax(predict({w1, b1, w2, b2}, batch_images), axis: :output)
      )
    )
  end

  defn loss({w1, b1, w2, b2}, batch_images, batch_labels) do
    preds = predict({w1, b1, w2, b2}, batch_images)
    -Nx.sum(Nx.mean(Nx.log(preds) * batch_labels, axes: [:output]))
  end

  defn update({w1, b1, w2, b2} = params, batch_images, batch_labels, step) do
    {grad_w1, grad_b1, grad_w2, grad_b2} = grad(params, &loss(&1, batch_images, batch_labels))

    {
      w1 - grad_w1 * step,
      b1 - grad_b1 * step,
      w2 - grad_w2 * step,
      b2 - grad_b2 * step
    }
  end

  defn update_with_averages({_, _, _, _} = cur_params, imgs, tar, avg_loss, avg_accuracy, total) do
    batch_loss = loss(cur_params, imgs, tar)
    batch_accuracy = accuracy(cur_params, imgs, tar)
    avg_loss = avg_loss + batch_loss / total
    avg_accuracy = avg_accuracy + batch_accuracy / total
    {update(cur_params, imgs, tar, 0.01), avg_loss, avg_accuracy}
  end

  # Plain Elixir: nxc skips these bodies.
  def batches(images, labels, size \\ 30) do
    {Nx.to_batched(images, size), Nx.to_batched(labels, size)}
  end

  def train_epoch(params, imgs, labels) do
    total = Enum.count(imgs)

    imgs
    |> Stream.zip(labels)
    |> Enum.reduce({params, Nx.tensor(0.0), Nx.tensor(0.0)}, fn {i, l}, {p, loss, acc} ->
      update_with_averages(p, i, l, loss, acc, total)
    end)
  end
end

IO.puts("#{inspect(MNIST.init_random_params() |> elem(1) |> Nx.shape())}")
