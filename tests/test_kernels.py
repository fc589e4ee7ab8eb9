"""The one Matérn-5/2 kernel and the two GPs on it, against scikit-learn's reference GP."""

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

from boanon.models.gp import GP, Hyperparameters
from boanon.multitask.icm import ICMGP


def _reference(amplitude, lengthscales, X, y, noise_kernel=None, alpha=1e-8):
    """scikit-learn's GP with fixed hyperparameters (no optimiser) and standardised targets."""
    kernel = ConstantKernel(amplitude, "fixed") * Matern(lengthscales, "fixed", nu=2.5)
    if noise_kernel is not None:
        kernel = kernel + WhiteKernel(noise_kernel, "fixed")
    return GaussianProcessRegressor(kernel, alpha=alpha, optimizer=None, normalize_y=True).fit(X, y)


@pytest.mark.parametrize("seed,n,d", [(0, 12, 1), (1, 30, 3), (2, 50, 6)])
def test_gp_predicts_as_the_reference_gp(seed, n, d):
    rng = np.random.default_rng(seed)
    X, Xq = rng.random((n, d)), rng.random((40, d))
    y = np.sin(3 * X).sum(axis=1) + 0.1 * rng.standard_normal(n) + 5.0
    hp = Hyperparameters(rng.uniform(0.5, 2.0), rng.uniform(0.2, 2.0, d), rng.uniform(1e-3, 0.1))
    ours = GP(hp).condition(X, y)
    reference = _reference(hp.amplitude, hp.lengthscales, X, y, noise_kernel=hp.noise)
    ref_mean, ref_sd = reference.predict(Xq, return_std=True)  # WhiteKernel: includes the noise
    mean, var = ours.predict(Xq, noise=True)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(np.sqrt(var), ref_sd, rtol=1e-6, atol=1e-8)
    # both of the standardised targets
    assert ours.log_marginal_likelihood == pytest.approx(reference.log_marginal_likelihood_value_, rel=1e-8)


def test_icm_with_one_task_predicts_as_the_reference_gp():
    rng = np.random.default_rng(3)
    X, Xq = rng.random((25, 2)), rng.random((30, 2))
    y = np.cos(4 * X[:, 0]) + X[:, 1] + 0.05 * rng.standard_normal(25)
    icm = ICMGP(1).fit(X, np.zeros(25, int), y)
    amplitude = float(icm.params_.task_cov[0, 0])
    noise = float(np.exp(icm.params_.log_noise[0]))
    reference = _reference(amplitude, np.exp(icm.params_.log_ls), X, y, alpha=noise + 1e-8)
    ref_mean, ref_sd = reference.predict(Xq, return_std=True)  # the noise-free function
    mean, sd = icm.predict(Xq, np.zeros(30, int))
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(sd, ref_sd, rtol=1e-6, atol=1e-8)

