import Foundation
import SanadCore

/// The pure-Swift engine's options, from the host config's `backends[].options` (or
/// `ModelLoadOptions.engineOptions`). Unknown keys and wrong types are errors that name the key.
public struct PureSwiftOptions: Sendable, Equatable {
    /// The keys the engine reads.
    public static let keys = ["kernels", "repack-weights"]

    /// A kernel build name ("auto", "avx512", "avx2", "portable"); nil = `SANAD_KERNELS`, else auto.
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
        for key in options.keys.sorted() where !Self.keys.contains(key) {
            throw SanadError.engine(
                "pure-swift: unknown engine option '\(key)'; the pure-swift engine reads: "
                    + Self.keys.joined(separator: ", "))
        }
        if let value = options["kernels"] {
            guard let name = value.stringValue else {
                throw SanadError.engine(
                    "pure-swift: engine option 'kernels' is \(value); use a build name such as \"auto\"")
            }
            kernels = name
        }
        if let value = options["repack-weights"] {
            guard let flag = value.boolValue else {
                throw SanadError.engine(
                    "pure-swift: engine option 'repack-weights' is \(value); use true (the default) or false")
            }
            repackWeights = flag
        }
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
