"""A small multilayer perceptron scorer in torch (CPU, CUDA or MPS), trained by logistic loss.

torch is imported inside the methods, so it is loaded only when an MLP is trained or evaluated.
"""

from __future__ import annotations

import numpy as np

from .preprocessing import Standardiser, in_chunks, training_set


def select_device(device: str = "auto") -> str:
    """"auto" -> "cuda" if available, else "mps" if available, else "cpu"; other values are checked."""
    import torch

    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if device not in ("cpu", "cuda", "mps") and not device.startswith("cuda:"):
        raise ValueError(f"unknown torch device {device!r}; allowed: 'auto', 'cpu', 'cuda', 'cuda:N', 'mps'")
    return device


class _Adam:
    """Adam with torch.optim.Adam's defaults and its single-tensor update, step for step; written out
    because torch.optim imports torch._dynamo (seconds of start-up) on first use."""

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-8):
        import torch

        self.params, self.lr, self.betas, self.eps, self.steps = params, lr, betas, eps, 0
        self.moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        import torch

        beta1, beta2 = self.betas
        self.steps += 1
        step_size = self.lr / (1 - beta1 ** self.steps)
        correction2 = (1 - beta2 ** self.steps) ** 0.5
        with torch.no_grad():
            for p, (mean, square) in zip(self.params, self.moments):
                mean.lerp_(p.grad, 1 - beta1)
                square.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                p.addcdiv_(mean, (square.sqrt() / correction2).add_(self.eps), value=-step_size)


class MLPScorer:
    """ReLU MLP with one logit output, Adam, mini-batches, early stopping on a 10% split.

    Minimising the logistic loss with balanced classes makes the logit an estimate of log(p/q).
    Training is seeded (torch.Generator), so a fixed seed gives the same scorer on the same device.
    """

    name = "mlp"

    def __init__(self, hidden=(64, 64), epochs: int = 15, batch_size: int = 4096, lr: float = 3e-3,
                 max_fit: int = 200_000, patience: int = 2, device: str = "auto", threads: int | None = 1,
                 progress: bool = False):
        self.hidden, self.epochs, self.batch_size, self.lr = tuple(hidden), epochs, batch_size, lr
        self.max_fit, self.patience, self.device, self.progress = max_fit, patience, device, progress
        self.threads = threads

    def fit(self, X_p, X_q, seed=0):
        """Train on X_p (label 1) against X_q (label 0). `threads` CPU threads are used during the
        fit (1 by default: for layers this small, more threads mostly add synchronisation cost)."""
        import torch

        previous = torch.get_num_threads()
        if self.threads:
            torch.set_num_threads(self.threads)
        try:
            return self._fit(X_p, X_q, seed)
        finally:
            torch.set_num_threads(previous)

    def _fit(self, X_p, X_q, seed):
        import torch
        from tqdm.auto import tqdm

        X, y = training_set(X_p, X_q, self.max_fit)
        self.device_ = select_device(self.device)
        self._scale = Standardiser().fit(X)
        generator = torch.Generator().manual_seed(int(seed) % 2**63)
        torch.manual_seed(int(seed) % 2**63)
        layers, width = [], X.shape[1]
        for h in self.hidden:
            layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
            width = h
        layers.append(torch.nn.Linear(width, 1))
        self.model = torch.nn.Sequential(*layers).to(self.device_)

        data = torch.as_tensor(self._scale(X), dtype=torch.float32)
        labels = torch.as_tensor(y, dtype=torch.float32)
        order = torch.randperm(len(data), generator=generator)
        n_stop = max(len(data) // 10, 1)
        stop_x, stop_y = data[order[:n_stop]].to(self.device_), labels[order[:n_stop]].to(self.device_)
        fit_x, fit_y = data[order[n_stop:]], labels[order[n_stop:]]

        loss_fn = torch.nn.BCEWithLogitsLoss()
        optimiser = _Adam(list(self.model.parameters()), lr=self.lr)
        best, best_state, waited = np.inf, None, 0
        for _ in tqdm(range(self.epochs), desc="training mlp", disable=not self.progress, leave=False):
            self.model.train()
            for batch in torch.randperm(len(fit_x), generator=generator).split(self.batch_size):
                optimiser.zero_grad()
                loss = loss_fn(self.model(fit_x[batch].to(self.device_)).squeeze(1), fit_y[batch].to(self.device_))
                loss.backward()
                optimiser.step()
            self.model.eval()
            with torch.no_grad():
                held = float(loss_fn(self.model(stop_x).squeeze(1), stop_y))
            if held < best - 1e-6:
                best, waited = held, 0
                best_state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
            else:
                waited += 1
                if waited >= self.patience:
                    break
        self.model.load_state_dict(best_state)
        self.model.to("cpu").eval()
        return self

    def log_odds(self, X):
        """The logit of each row of X: an estimate of log p/q."""
        import torch

        def chunk(c):
            with torch.no_grad():
                tensor = torch.as_tensor(self._scale(c), dtype=torch.float32)
                return self.model(tensor).squeeze(1).double().numpy()

        previous = torch.get_num_threads()
        if self.threads:
            torch.set_num_threads(self.threads)
        try:
            return in_chunks(chunk, X)
        finally:
            torch.set_num_threads(previous)
