import PureSwiftKernels

/// Rotary position embedding of one frequency setting (`RoPEConfiguration`: llama.cpp's normal or NeoX pairing,
/// frequency base and scale, per-pair factors). It holds the cos/sin tables of a batch's positions, filled once per
/// batch and read by every layer that uses this setting; a model whose layers use different bases (Gemma 3's local
/// and global layers) has one per base.
final class RotaryEmbedding {
    let configuration: RoPEConfiguration
    let kernels: any KernelSet
    /// (batch, dimensions) cos/sin per position, interleaved.
    private let tables: UnsafeMutablePointer<Float>

    init(_ configuration: RoPEConfiguration, batch: Int, kernels: any KernelSet, scratch: ScratchBuffers) throws {
        self.configuration = configuration
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

    /// Rotates the `heads` heads of batch row `b` (`heads × dimensions` values at `x`) by that row's position.
    func apply(_ x: UnsafeMutablePointer<Float>, heads: Int, row b: Int) {
        kernels.applyRoPE(
            x, heads: heads, table: tables + b * configuration.dimensions, dimensions: configuration.dimensions,
            mode: configuration.mode)
    }
}
