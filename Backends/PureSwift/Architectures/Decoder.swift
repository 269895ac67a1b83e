import GGUF

/// What one decoder architecture adds to what every architecture shares (the embedding, the output, blocks of
/// attention and feed-forward weights read in place, the runner's buffers): its configuration, its blocks' weights
/// and its forward pass. An architecture is one file with one of these and a line in `ArchitectureRegistry`.
protocol DecoderArchitecture {
    associatedtype Configuration: DecoderConfiguration & Sendable
    associatedtype Layer
    associatedtype Runner: DecoderRunner
    /// The `general.architecture` string.
    static var name: String { get }
    /// The configuration of `file`, with anything it takes from tensors.
    static func configuration(_ file: GGUFFile) throws -> Configuration
    /// The weights of one block.
    static func layer(_ tensors: BlockTensors, _ c: Configuration) throws -> Layer
    /// The runner's shape: the dimensions, the attention's scale and the feed-forward activation.
    static func shape(_ c: Configuration) -> DecoderShape
    /// A runner over `state` (the forward pass).
    static func runner(_ model: Decoder<Self>, state: DecoderState) throws -> Runner
}

/// A decoder-only model of architecture `A`: its configuration plus weights read in place from the GGUF file.
// @unchecked Sendable: weights read-only after load; runners own their buffers
final class Decoder<A: DecoderArchitecture>: DecoderModel, @unchecked Sendable {
    let file: GGUFFile
    let configuration: A.Configuration
    let weights: DecoderWeights
    let layers: [A.Layer]

    var architecture: String { A.name }
    var dimensions: DecoderDimensions { configuration.dimensions }

    /// The model in `file`; `repackWeights` as for `DecoderWeights`.
    init(file: GGUFFile, repackWeights: Bool = true) throws {
        self.file = file
        let c = try A.configuration(file)
        configuration = c
        weights = try DecoderWeights(file: file, dimensions: c.dimensions, repackWeights: repackWeights)
        layers = try (0..<c.dimensions.layers).map { [weights] i in
            try A.layer(weights.block(i, file: file, normEpsilon: c.dimensions.normEpsilon), c)
        }
    }

    func makeRunner(contextLength: Int, batchSize: Int, threads: Int, options: RunnerOptions) throws
        -> any ModelRunner
    {
        try A.runner(
            self,
            state: DecoderState(
                A.shape(configuration), contextLength: contextLength, batchSize: batchSize, threads: threads,
                options: options))
    }
}
