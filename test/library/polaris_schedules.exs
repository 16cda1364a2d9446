Application.ensure_all_started(:nx)
for {name, f} <- [linear_decay: &Polaris.Schedules.linear_decay/1, exponential_decay: &Polaris.Schedules.exponential_decay/1,
                  cosine_decay: &Polaris.Schedules.cosine_decay/1, constant: &Polaris.Schedules.constant/1,
                  polynomial_decay: &Polaris.Schedules.polynomial_decay/1], step <- [0, 5, 500, 2000] do
  IO.puts("#{name} #{step} #{Nx.to_number(f.(1.0e-2).(Nx.tensor(step)))}")
end
