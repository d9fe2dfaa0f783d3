"""WADA-SNR: a blind SNR estimate that needs no pauses (speech from the first sample to the
last), after Kim and Stern, "Robust signal-to-noise ratio estimation based on waveform
amplitude distribution analysis", Interspeech 2008.

**Model.** Clean speech samples are ``s * a`` with a random sign ``s`` and an amplitude ``a``
drawn from a Gamma distribution of shape :data:`SPEECH_SHAPE` (0.4, the paper's fit); noise
is Gaussian and independent of the speech. The statistic

    G = ln(mean |x|) - mean(ln |x|)

depends only on the SNR (the power of ``s * a`` over the noise power): ``ln(2/pi)/2 +
(euler_gamma + ln 2)/2 = 0.4094`` for noise alone, ``ln k - digamma(k) = 1.6451`` for clean
Gamma(k) speech. :data:`G_TABLE` holds G at -20 to 100 dB in 1 dB steps; a recording's G is
mapped to an SNR by linear interpolation in it.

**The table** is computed here, not taken from the authors' MATLAB release (which ships it as
a .mat file made by simulation): with noise of unit power and ``a = theta t``, ``t ~
Gamma(k, 1)``, E|x| and E ln|x| are expectations over ``t`` of ``E|mu + Z|`` (closed form:
``sqrt(2/pi) exp(-mu^2/2) + mu erf(mu/sqrt 2)``) and ``E ln|mu + Z|`` (``Z`` standard normal;
a Poisson mixture of ``(ln 2 + digamma(1/2 + j))/2``, since ``(mu + Z)^2`` is a noncentral
chi-square with one degree of freedom; its asymptotic series above ``mu = 20``), with ``mu =
theta t`` (the sign does not matter: Z is symmetric). The expectation over ``t`` is
integrated with ``scipy.integrate.quad`` over ``u = ln t``. :func:`compute_g_table`
recomputes it (a few seconds); ``benchmarks/wada_table.py`` prints it as source and the tests
check it against the constant, against the closed forms above and a seeded Monte Carlo.
"""

from __future__ import annotations

import math

import numpy as np

from rig.audio import Audio

SPEECH_SHAPE = 0.4
TABLE_SNR_DB = tuple(range(-20, 101))
MIN_WADA_S = 0.5

#: G at each SNR of :data:`TABLE_SNR_DB` for Gamma(0.4) speech in Gaussian noise
#: (:func:`compute_g_table`, rounded to 8 decimals).
G_TABLE: tuple[float, ...] = (
    0.40943470, 0.40945950, 0.40949762, 0.40955585, 0.40964412, 0.40977680, 0.40997422, 0.41026473,
    0.41068699, 0.41129251, 0.41214827, 0.41333908, 0.41496934, 0.41716371, 0.42006640, 0.42383855,
    0.42865366, 0.43469103, 0.44212755, 0.45112839, 0.46183732, 0.47436773, 0.48879504, 0.50515144,
    0.52342326, 0.54355138, 0.56543434, 0.58893370, 0.61388120, 0.64008667, 0.66734632, 0.69545050,
    0.72419070, 0.75336533, 0.78278429, 0.81227220, 0.84167053, 0.87083865, 0.89965408, 0.92801212,
    0.95582492, 0.98302037, 1.00954067, 1.03534094, 1.06038765, 1.08465732, 1.10813505, 1.13081336,
    1.15269102, 1.17377204, 1.19406475, 1.21358106, 1.23233570, 1.25034569, 1.26762978, 1.28420806,
    1.30010156, 1.31533194, 1.32992126, 1.34389172, 1.35726554, 1.37006476, 1.38231115, 1.39402611,
    1.40523061, 1.41594510, 1.42618950, 1.43598315, 1.44534479, 1.45429254, 1.46284393, 1.47101584,
    1.47882453, 1.48628568, 1.49341434, 1.50022498, 1.50673149, 1.51294719, 1.51888488, 1.52455681,
    1.52997471, 1.53514984, 1.54009295, 1.54481436, 1.54932393, 1.55363110, 1.55774489, 1.56167393,
    1.56542647, 1.56901042, 1.57243332, 1.57570237, 1.57882447, 1.58180620, 1.58465387, 1.58737348,
    1.58997078, 1.59245127, 1.59482018, 1.59708253, 1.59924311, 1.60130649, 1.60327704, 1.60515893,
    1.60695615, 1.60867250, 1.61031162, 1.61187699, 1.61337191, 1.61479957, 1.61616298, 1.61746503,
    1.61870849, 1.61989599, 1.62103005, 1.62211307, 1.62314735, 1.62413509, 1.62507837, 1.62597920,
    1.62683949,
)


def _e_abs(mu: float) -> float:
    """E|mu + Z|, Z ~ N(0, 1) (the folded normal's mean)."""
    return math.sqrt(2 / math.pi) * math.exp(-mu * mu / 2) + mu * math.erf(mu / math.sqrt(2))


def _e_log_abs(mu: float) -> float:
    """E ln|mu + Z|, Z ~ N(0, 1)."""
    from scipy import special

    mu = abs(mu)
    if mu > 20:  # ln mu + E ln(1 + Z/mu): the series in E Z^2k = (2k - 1)!!
        m2 = mu * mu
        return (math.log(mu) - 1 / (2 * m2) - 3 / (4 * m2**2) - 15 / (6 * m2**3)
                - 105 / (8 * m2**4) - 945 / (10 * m2**5))
    j = np.arange(1200)
    lam = mu * mu / 2  # (mu + Z)^2 is chi-square with 1 + 2J degrees of freedom, J ~ Poisson
    w = (np.exp(-lam + j * math.log(lam) - special.gammaln(j + 1)) if lam > 0
         else (j == 0).astype(float))
    return 0.5 * (math.log(2) + float(np.sum(w * special.digamma(0.5 + j))))


def g_of_snr_db(snr_db: float, shape: float = SPEECH_SHAPE) -> float:
    """The model's G (module docstring) at ``snr_db``, by numerical integration."""
    from scipy import integrate, special

    theta = math.sqrt(10 ** (snr_db / 10) / (shape * (shape + 1)))  # E a^2 = k (k + 1) theta^2
    c = 1 / special.gamma(shape)
    u0 = -math.log(theta)  # where mu = theta e^u crosses the noise's scale
    lo, hi = -120.0, 4.6  # the Gamma(k) mass outside is under 1e-20

    def mean(h) -> float:
        def f(u: float) -> float:
            return h(theta * math.exp(u)) * math.exp(shape * u - math.exp(u)) * c
        points = sorted(p for p in (u0 - 3, u0, u0 + 3, 0.0) if lo < p < hi)
        return integrate.quad(f, lo, hi, points=points, limit=400, epsabs=1e-13,
                              epsrel=1e-12)[0]

    return math.log(mean(_e_abs)) - mean(_e_log_abs)


def compute_g_table(shape: float = SPEECH_SHAPE) -> tuple[float, ...]:
    """:data:`G_TABLE` recomputed (rounded to 8 decimals)."""
    return tuple(round(g_of_snr_db(s, shape), 8) for s in TABLE_SNR_DB)


def wada_g(samples: np.ndarray) -> float:
    """G = ln(mean |x|) - mean(ln |x|) over the non-zero samples (float64 arithmetic).

    Exact zeros are skipped: digital silence (or a sample quantized to zero) has probability
    zero under the Gaussian noise model, and the paper's code's floor (1e-10 after scaling to
    a peak of 1) would add ln(1e-10) per zero to the mean.
    """
    a = np.abs(np.asarray(samples, np.float64))
    a = a[a > 0]
    return math.log(float(a.mean())) - float(np.log(a).mean())


def wada_snr_db(audio: Audio) -> tuple[float | None, str | None]:
    """Blind SNR of speech without pauses by WADA-SNR (module docstring).

    Assumes the audio is speech throughout (continuous speech is the case it is for; noise
    alone reads near -20 dB) and the noise Gaussian and stationary: impulsive noise (clatter)
    has a peakier amplitude distribution and reads as a better SNR, and speech whose
    amplitudes are less peaky than Gamma(0.4) reads as a worse one (measured on real speech
    in ``docs/monitoring.md``: it reads low, more so the cleaner the speech).

    Args:
        audio: float32 mono, any rate (the SNR is over the recording's whole band).

    Returns:
        ``(snr_db, None)``: the SNR in dB (speech power over noise power), interpolated in
        :data:`G_TABLE` and clipped to its range, [-20, 100] dB (a G below the Gaussian's
        reads -20, above the table's last, 100); or ``(None, reason)`` when the audio cannot
        support an estimate: non-finite samples, under :data:`MIN_WADA_S` of audio, silent
        (every sample zero), or under :data:`MIN_WADA_S` of non-zero samples.
    """
    x = audio.samples
    need = MIN_WADA_S * audio.sample_rate_hz
    if not np.all(np.isfinite(x)):
        return None, "the audio has non-finite samples"
    if len(x) < need:
        return None, f"under {MIN_WADA_S:g} s of audio"
    nonzero = int(np.count_nonzero(x))
    if nonzero == 0:
        return None, "silent: every sample is zero"
    if nonzero < need:
        return None, f"under {MIN_WADA_S:g} s of non-zero samples"
    return float(np.interp(wada_g(x), G_TABLE, TABLE_SNR_DB)), None
