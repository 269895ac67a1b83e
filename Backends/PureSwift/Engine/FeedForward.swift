import PureSwiftKernels

/// The activation of a feed-forward block, as llama.cpp's CPU backend computes each (Kernels/LlamaCppExact.swift,
/// Kernels/GELU.swift).
enum FeedForwardActivation: Sendable, Equatable {
    /// SiLU (x·σ(x)); gated: SwiGLU (llama).
    case silu
    /// GELU, tanh approximation through ggml's half table; gated: GEGLU (Gemma).
    case gelu
    /// GELU in its erf form (BERT).
    case geluErf
}

/// A feed-forward block's weights: `down · act(gate · x) ⊙ (up · x)` when gated, `down · act(up · x)` otherwise.
struct FeedForwardWeights {
    /// Nil for an ungated block (BERT).
    let gate: Projection?
    let up: Projection
    let down: Projection
}

/// Runs feed-forward blocks of one width: owns the hidden-layer scratch of a batch.
final class FeedForward {
    let activation: FeedForwardActivation
    /// Hidden width (`feed_forward_length`).
    let width: Int
    let projector: Projector
    private let gate: UnsafeMutablePointer<Float>  // (batch, width)
    private let up: UnsafeMutablePointer<Float>  // (batch, width)

    init(
        activation: FeedForwardActivation, width: Int, batch: Int, projector: Projector, scratch: ScratchBuffers
    ) throws {
        self.activation = activation
        self.width = width
        self.projector = projector
        gate = try scratch.floats(batch * width)
        up = try scratch.floats(batch * width)
    }

    /// `out` (n, down.outputs) = the block applied to `input` (n, up.weight.columns), for `n` rows. `out` may be
    /// `input`.
    func apply(
        _ w: FeedForwardWeights, _ input: UnsafePointer<Float>, rows n: Int, into out: UnsafeMutablePointer<Float>
    ) {
        let kernels = projector.kernels
        let width = self.width
        let (gate, up) = (self.gate, self.up)
        if let gateProjection = w.gate {
            projector.projectGroup((gateProjection, gate), (w.up, up), nil, input, rows: n)
        } else {
            projector.project(w.up, input, rows: n, into: gate)
        }
        let gated = w.gate != nil
        let activation = self.activation
        parallelRows(n, width: width, threads: projector.threads) { r in
            let (g, u, count) = (gate + r.lowerBound * width, up + r.lowerBound * width, r.count * width)
            switch activation {
            case .silu:
                if !gated { u.update(repeating: 1, count: count) }  // SiLU without a gate multiplies by one
                kernels.swiGLU(gate: g, up: u, out: g, count: count)
            case .gelu: kernels.gelu(g, up: gated ? u : nil, out: g, count: count)
            case .geluErf: kernels.geluErf(g, up: gated ? u : nil, out: g, count: count)
            }
        }
        projector.project(w.down, gate, rows: n, into: out)
    }
}
