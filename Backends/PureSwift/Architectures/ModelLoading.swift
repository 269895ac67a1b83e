import GGUF
import PureSwiftKernels

/// Reads an architecture's hyperparameters (`<architecture>.<key>`) with errors that name the file and the key.
struct HyperparameterReader {
    let file: GGUFFile
    let architecture: String

    func key(_ name: String) -> String { "\(architecture).\(name)" }

    /// A positive integer; `fallback` when the key is absent (without one, absence is an error naming the key).
    func int(_ name: String, default fallback: Int? = nil) throws -> Int { try read(name, fallback, positive) }

    /// A finite number; `fallback` when the key is absent (without one, absence is an error naming the key).
    func float(_ name: String, default fallback: Float? = nil) throws -> Float { try read(name, fallback, number) }

    private func read<T>(_ name: String, _ fallback: T?, _ convert: (GGUFValue, String) throws -> T) throws -> T {
        let k = key(name)
        guard let value = file.metadata[k] else {
            if let fallback { return fallback }
            throw GGUFError.missingKey(path: file.path, key: k)
        }
        return try convert(value, k)
    }

    func string(_ name: String) -> String? { file.string(key(name)) }

    private func positive(_ value: GGUFValue, _ k: String) throws -> Int {
        if case .array = value {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: k, problem: "holds per-layer values; the pure-Swift engine needs one value")
        }
        guard let i = value.intValue else {
            throw GGUFError.wrongKeyType(path: file.path, key: k, expected: "an integer", found: value.type.description)
        }
        guard i > 0, i <= 1 << 30 else {
            throw PureSwiftError.badHyperparameter(
                path: file.path, key: k, problem: "is \(i), expected a positive count")
        }
        return i
    }

    private func number(_ value: GGUFValue, _ k: String) throws -> Float {
        guard let d = value.doubleValue, d.isFinite else {
            throw GGUFError.wrongKeyType(path: file.path, key: k, expected: "a number", found: value.type.description)
        }
        return Float(d)
    }
}

/// Finds a model's tensors and checks their shapes and types, with errors that name the tensor.
struct TensorLoader {
    let file: GGUFFile

    /// A weight matrix of `rows` rows of `columns` values (ggml dimensions `[columns, rows]`).
    func matrix(_ name: String, rows: Int, columns: Int) throws -> WeightMatrix {
        let info = try file.requireTensor(name)
        guard info.dimensions == [columns, rows] else {
            throw PureSwiftError.badTensorShape(
                path: file.path, tensor: name, expected: "[\(columns), \(rows)]", found: info.dimensions)
        }
        return try WeightMatrix(file: file, tensor: info)
    }

    /// An F32 vector of `count` values.
    func vector(_ name: String, count: Int) throws -> UnsafePointer<Float> {
        let info = try file.requireTensor(name)
        guard info.type == .f32 else {
            throw PureSwiftError.unsupportedTensorType(
                path: file.path, tensor: name, type: info.type.description, supported: [GGMLType.f32.description])
        }
        guard info.elementCount == count else {
            throw PureSwiftError.badTensorShape(
                path: file.path, tensor: name, expected: "[\(count)]", found: info.dimensions)
        }
        return file.data(of: info).assumingMemoryBound(to: Float.self)
    }

    /// An F32 vector when the file has it.
    func optionalVector(_ name: String, count: Int) throws -> UnsafePointer<Float>? {
        guard file.tensor(named: name) != nil else { return nil }
        return try vector(name, count: count)
    }
}

extension WeightMatrix {
    /// The tensor `info` of `file` as a matrix. Throws `PureSwiftError.unsupportedTensorType` for a type without
    /// kernels and `.badTensorShape` when a row is not a whole number of blocks.
    public init(file: GGUFFile, tensor info: GGUFTensorInfo) throws {
        guard Self.supportedTypes.contains(info.type) else {
            throw PureSwiftError.unsupportedTensorType(
                path: file.path, tensor: info.name, type: info.type.description,
                supported: Self.supportedTypes.map(\.description))
        }
        guard info.rowLength % info.type.blockSize == 0, info.dimensions.count <= 2 else {
            throw PureSwiftError.badTensorShape(
                path: file.path, tensor: info.name, expected: "a 2-D matrix whose rows hold whole \(info.type) blocks",
                found: info.dimensions)
        }
        self.init(
            name: info.name, type: info.type, rows: info.rowCount, columns: info.rowLength, rowBytes: info.rowBytes,
            base: file.data(of: info))
    }
}
