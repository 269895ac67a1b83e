import Foundation
import SanadCore

/// The pure-Swift engine's options, from the host config's `backends[].options` (or
/// `ModelLoadOptions.engineOptions`). Unknown keys and wrong types are errors that name the key.
public struct PureSwiftOptions: Sendable, Equatable {
    /// The keys the engine reads.
    public static let keys = ["kernels", "repack-weights"]

    /// A kernel build name ("auto", "avx512vnni", "avx512", "avx2", "portable"); nil = `SANAD_KERNELS`, else auto.
    public var kernels: String?
    /// Whether Q4_1 matrices are regrouped into private memory for faster products (`RepackedWeights`).
    public var repackWeights: Bool

    public init(kernels: String? = nil, repackWeights: Bool = true) {
        self.kernels = kernels
        self.repackWeights = repackWeights
    }

    /// Reads `options`; throws `SanadError.engine` naming the key for an unknown key or a wrong value.
    public init(parsing options: [String: JSONValue]) throws {
        self.init()
        let reader = try OptionReader(options, allowed: Self.keys) { key, problem in
            SanadError.engine("pure-swift: engine option '\(key)': \(problem)")
        }
        kernels = try reader.string("kernels", expected: "a kernel build name such as \"auto\"")
        repackWeights = try reader.bool("repack-weights") ?? repackWeights
    }

    /// The kernel build asked for: `option`, else the environment variable `SANAD_KERNELS` (the one place it is
    /// read), else nil (auto).
    public static func kernelBuildName(_ option: String?) -> String? {
        option ?? ProcessInfo.processInfo.environment["SANAD_KERNELS"]
    }

    /// The kernel build these options select on this CPU; throws when the name is unknown or the CPU cannot run it.
    /// The error names where the name came from: the engine option `kernels` or `SANAD_KERNELS`.
    public func selectKernels() throws -> any KernelSet {
        do {
            return try KernelBuilds.select(Self.kernelBuildName(kernels))
        } catch SanadError.engine(let message) {
            let source = kernels != nil ? "engine option \"kernels\"" : "SANAD_KERNELS"
            let name = Self.kernelBuildName(kernels) ?? ""
            throw SanadError.engine(
                message.replacingOccurrences(of: "pure-swift: ", with: "pure-swift: \(source)=\(name): "))
        }
    }
}
