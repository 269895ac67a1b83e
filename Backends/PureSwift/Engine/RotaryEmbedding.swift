import PureSwiftKernels

/// Rotary position embedding of one frequency setting (`RoPEConfiguration`: llama.cpp's normal or NeoX pairing,
/// frequency base and scale, per-pair factors). It holds the cos/sin tables of a batch's positions, filled once per
/// batch and read by every layer that uses this setting; a model whose layers use different bases (Gemma 3's local
/// and global layers) has one per base. When the setting rotates fewer values than a head holds (Phi-4-mini's
/// partial rotary embedding), the first `dimensions` of each head turn and the rest pass through, as in ggml.
final class RotaryEmbedding {
    let configuration: RoPEConfiguration
    /// Values per head (at least `configuration.dimensions`).
    let headDimension: Int
    let kernels: any KernelSet
    /// (batch, dimensions) cos/sin per position, interleaved.
    private let tables: UnsafeMutablePointer<Float>

    init(
        _ configuration: RoPEConfiguration, headDimension: Int, batch: Int, kernels: any KernelSet,
        scratch: ScratchBuffers
    ) throws {
        self.configuration = configuration
        self.headDimension = headDimension
        self.kernels = kernels
        tables = try scratch.floats(batch * configuration.dimensions)
    }

    /// Fills the tables of the `count` rows of `pass`: positions from its cache's count for one sequence, each
    /// sequence's next position in a decoding step.
    func prepare(_ pass: PassSequences, count: Int) {
        for b in 0..<count {
            ropeTable(
                tables + b * configuration.dimensions, position: pass.position(row: b), configuration: configuration)
        }
    }

    /// Rotates the `heads` heads of batch row `b` (`heads × headDimension` values at `x`) by that row's position.
    func apply(_ x: UnsafeMutablePointer<Float>, heads: Int, row b: Int) {
        let (table, dimensions) = (tables + b * configuration.dimensions, configuration.dimensions)
        if dimensions == headDimension {
            kernels.applyRoPE(x, heads: heads, table: table, dimensions: dimensions, mode: configuration.mode)
            return
        }
        for h in 0..<heads {
            kernels.applyRoPE(
                x + h * headDimension, heads: 1, table: table, dimensions: dimensions, mode: configuration.mode)
        }
    }
}
