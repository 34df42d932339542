//! RecBi's advantage actor-critic (spec recbi.md §7): an actor 11→20→11 (ReLU, softmax)
//! and a critic 11→15→1 (ReLU), weights drawn from N(0, 0.1), biases 0, one Adam optimizer
//! over both, u-step returns with discount γ.
//!
//! Written by hand: two one-hidden-layer networks with a few hundred weights do not
//! justify a tensor library, and `gradient_check` below tests the backpropagation.

use rand::{Rng, RngExt};

/// A dense layer `out = W x + b`, row-major W.
#[derive(Debug, Clone)]
struct Layer {
    inputs: usize,
    outputs: usize,
    w: Vec<f64>,
    b: Vec<f64>,
}

/// A standard normal draw (Box–Muller): rand 0.10 has no distributions without rand_distr.
fn normal(rng: &mut dyn Rng) -> f64 {
    let u1: f64 = rng.random_range(f64::EPSILON..1.0);
    let u2: f64 = rng.random_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

impl Layer {
    fn new(inputs: usize, outputs: usize, rng: &mut dyn Rng) -> Layer {
        let w = (0..inputs * outputs).map(|_| 0.1 * normal(rng)).collect();
        Layer { inputs, outputs, w, b: vec![0.0; outputs] }
    }

    fn forward(&self, x: &[f64]) -> Vec<f64> {
        (0..self.outputs)
            .map(|o| self.b[o] + (0..self.inputs).map(|i| self.w[o * self.inputs + i] * x[i]).sum::<f64>())
            .collect()
    }

    /// Accumulate the gradients of `x -> out` given d(loss)/d(out); d(loss)/d(x).
    fn backward(&self, x: &[f64], d_out: &[f64], grad: &mut Layer) -> Vec<f64> {
        let mut d_x = vec![0.0; self.inputs];
        for (o, d) in d_out.iter().enumerate() {
            grad.b[o] += d;
            for (i, xi) in x.iter().enumerate() {
                grad.w[o * self.inputs + i] += d * xi;
                d_x[i] += d * self.w[o * self.inputs + i];
            }
        }
        d_x
    }

    fn zeros_like(&self) -> Layer {
        Layer { w: vec![0.0; self.w.len()], b: vec![0.0; self.b.len()], ..*self }
    }

    fn params_mut(&mut self) -> impl Iterator<Item = &mut f64> {
        self.w.iter_mut().chain(self.b.iter_mut())
    }
}

/// Two layers with a ReLU between.
#[derive(Debug, Clone)]
struct Mlp {
    hidden: Layer,
    out: Layer,
}

/// What a forward pass keeps for the backward one.
struct Trace {
    input: Vec<f64>,
    hidden: Vec<f64>,
    output: Vec<f64>,
}

impl Mlp {
    fn new(inputs: usize, hidden: usize, outputs: usize, rng: &mut dyn Rng) -> Mlp {
        Mlp { hidden: Layer::new(inputs, hidden, rng), out: Layer::new(hidden, outputs, rng) }
    }

    fn forward(&self, x: &[f64]) -> Trace {
        let hidden: Vec<f64> = self.hidden.forward(x).into_iter().map(|h| h.max(0.0)).collect();
        let output = self.out.forward(&hidden);
        Trace { input: x.to_vec(), hidden, output }
    }

    fn backward(&self, t: &Trace, d_out: &[f64], grad: &mut Mlp) {
        let d_hidden = self.out.backward(&t.hidden, d_out, &mut grad.out);
        let d_pre: Vec<f64> = d_hidden.iter().zip(&t.hidden).map(|(d, h)| if *h > 0.0 { *d } else { 0.0 }).collect();
        self.hidden.backward(&t.input, &d_pre, &mut grad.hidden);
    }

    fn zeros_like(&self) -> Mlp {
        Mlp { hidden: self.hidden.zeros_like(), out: self.out.zeros_like() }
    }

    fn params_mut(&mut self) -> impl Iterator<Item = &mut f64> {
        self.hidden.params_mut().chain(self.out.params_mut())
    }
}

fn softmax(logits: &[f64]) -> Vec<f64> {
    let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exp: Vec<f64> = logits.iter().map(|l| (l - max).exp()).collect();
    let sum: f64 = exp.iter().sum();
    exp.into_iter().map(|e| e / sum).collect()
}

/// One step of experience: the state seen, the action taken, its reward.
#[derive(Debug, Clone)]
pub struct Step {
    pub state: Vec<f64>,
    pub action: usize,
    pub reward: f64,
}

pub struct ActorCritic {
    actor: Mlp,
    critic: Mlp,
    adam: Adam,
    pub gamma: f64,
}

/// Adam (β1 0.9, β2 0.999, ε 1e-8) over the parameters of both networks in order.
struct Adam {
    lr: f64,
    m: Vec<f64>,
    v: Vec<f64>,
    t: i32,
}

impl ActorCritic {
    pub const HIDDEN_ACTOR: usize = 20;
    pub const HIDDEN_CRITIC: usize = 15;

    pub fn new(actions: usize, lr: f64, gamma: f64, rng: &mut dyn Rng) -> ActorCritic {
        let actor = Mlp::new(actions, Self::HIDDEN_ACTOR, actions, rng);
        let critic = Mlp::new(actions, Self::HIDDEN_CRITIC, 1, rng);
        let n = count(&actor) + count(&critic);
        ActorCritic { actor, critic, adam: Adam { lr, m: vec![0.0; n], v: vec![0.0; n], t: 0 }, gamma }
    }

    /// The actor's distribution over actions in `state`.
    pub fn policy(&self, state: &[f64]) -> Vec<f64> {
        softmax(&self.actor.forward(state).output)
    }

    pub fn value(&self, state: &[f64]) -> f64 {
        self.critic.forward(state).output[0]
    }

    /// The loss of spec §7.4 on `steps` ending in `next_state`, and its gradient for the
    /// actor and the critic (the advantage is a constant in the actor's term).
    fn loss_and_gradient(&self, steps: &[Step], next_state: &[f64]) -> (f64, Mlp, Mlp) {
        let mut g_actor = self.actor.zeros_like();
        let mut g_critic = self.critic.zeros_like();
        let mut ret = self.value(next_state);
        let mut targets = vec![0.0; steps.len()];
        for (k, s) in steps.iter().enumerate().rev() {
            ret = s.reward + self.gamma * ret;
            targets[k] = ret;
        }
        let n = steps.len() as f64;
        let mut loss = 0.0;
        for (s, target) in steps.iter().zip(targets) {
            let critic = self.critic.forward(&s.state);
            let advantage = target - critic.output[0];
            let actor = self.actor.forward(&s.state);
            let p = softmax(&actor.output);
            loss += (advantage * advantage - p[s.action].ln() * advantage) / n;
            // d(adv²)/dV = -2 adv.
            self.critic.backward(&critic, &[-2.0 * advantage / n], &mut g_critic);
            // d(-log p_a · A)/d logit_j = (p_j - [j = a]) · A.
            let d_logits: Vec<f64> = p
                .iter()
                .enumerate()
                .map(|(j, pj)| (pj - if j == s.action { 1.0 } else { 0.0 }) * advantage / n)
                .collect();
            self.actor.backward(&actor, &d_logits, &mut g_actor);
        }
        (loss, g_actor, g_critic)
    }

    /// One Adam step on the loss of `steps`; the loss before the step.
    pub fn update(&mut self, steps: &[Step], next_state: &[f64]) -> f64 {
        let (loss, mut g_actor, mut g_critic) = self.loss_and_gradient(steps, next_state);
        let grads: Vec<f64> = g_actor.params_mut().chain(g_critic.params_mut()).map(|g| *g).collect();
        let a = &mut self.adam;
        a.t += 1;
        let (b1, b2, eps) = (0.9, 0.999, 1e-8);
        let params = self.actor.params_mut().chain(self.critic.params_mut());
        for (i, (p, g)) in params.zip(grads).enumerate() {
            a.m[i] = b1 * a.m[i] + (1.0 - b1) * g;
            a.v[i] = b2 * a.v[i] + (1.0 - b2) * g * g;
            let m_hat = a.m[i] / (1.0 - b1.powi(a.t));
            let v_hat = a.v[i] / (1.0 - b2.powi(a.t));
            *p -= a.lr * m_hat / (v_hat.sqrt() + eps);
        }
        loss
    }
}

fn count(m: &Mlp) -> usize {
    m.hidden.w.len() + m.hidden.b.len() + m.out.w.len() + m.out.b.len()
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    fn batch(rng: &mut ChaCha8Rng) -> (Vec<Step>, Vec<f64>) {
        let state = |rng: &mut ChaCha8Rng| (0..11).map(|_| rng.random_range(0.0..1.0)).collect::<Vec<f64>>();
        let steps = (0..5)
            .map(|_| Step { state: state(rng), action: rng.random_range(0..11), reward: rng.random_range(-1.0..1.0) })
            .collect();
        (steps, state(rng))
    }

    /// The analytic gradient matches central differences of the loss for every parameter
    /// of both networks (the advantage held constant in the actor's term, as in training).
    #[test]
    fn gradient_check() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let net = ActorCritic::new(11, 0.01, 0.9, &mut rng);
        let (steps, next) = batch(&mut rng);
        let (_, mut g_actor, mut g_critic) = net.loss_and_gradient(&steps, &next);
        let analytic: Vec<f64> = g_actor.params_mut().chain(g_critic.params_mut()).map(|g| *g).collect();
        // Targets and the actor's advantages come from the unperturbed networks: neither
        // is differentiated in training.
        let targets: Vec<f64> = {
            let mut ret = net.value(&next);
            let mut out = vec![0.0; steps.len()];
            for (k, s) in steps.iter().enumerate().rev() {
                ret = s.reward + net.gamma * ret;
                out[k] = ret;
            }
            out
        };
        let loss = |n: &ActorCritic| -> f64 {
            let mut total = 0.0;
            for (s, target) in steps.iter().zip(&targets) {
                let adv = target - n.value(&s.state);
                let fixed = target - net.value(&s.state);
                total += (adv * adv - n.policy(&s.state)[s.action].ln() * fixed) / steps.len() as f64;
            }
            total
        };
        let h = 1e-6;
        let mut worst: f64 = 0.0;
        for (i, &analytic) in analytic.iter().enumerate() {
            let nudge = |delta: f64| {
                let mut n = ActorCritic::new(11, 0.01, 0.9, &mut ChaCha8Rng::seed_from_u64(0));
                (n.actor, n.critic) = (net.actor.clone(), net.critic.clone());
                let p = n.actor.params_mut().chain(n.critic.params_mut()).nth(i).unwrap();
                *p += delta;
                loss(&n)
            };
            let numeric = (nudge(h) - nudge(-h)) / (2.0 * h);
            let error = (numeric - analytic).abs() / (1e-4 + numeric.abs() + analytic.abs());
            worst = worst.max(error);
        }
        assert!(worst < 1e-4, "largest relative gradient error {worst}");
        assert!(analytic.iter().any(|g| g.abs() > 1e-6), "the gradient is not all zero");
    }

    /// With a reward only for action 3, the policy learns to prefer it.
    #[test]
    fn the_actor_learns_a_rewarded_action() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut net = ActorCritic::new(11, 0.01, 0.9, &mut rng);
        let state = vec![1.0 / 11.0; 11];
        let before = net.policy(&state)[3];
        for _ in 0..200 {
            let steps: Vec<Step> = (0..5)
                .map(|_| {
                    let p = net.policy(&state);
                    let mut x: f64 = rng.random_range(0.0..1.0);
                    let action = p
                        .iter()
                        .position(|q| {
                            x -= q;
                            x < 0.0
                        })
                        .unwrap_or(10);
                    Step { state: state.clone(), action, reward: if action == 3 { 1.0 } else { 0.0 } }
                })
                .collect();
            net.update(&steps, &state);
        }
        let after = net.policy(&state)[3];
        assert!(after > 0.5 && after > before * 3.0, "p(3) went from {before:.3} to {after:.3}");
    }
}
