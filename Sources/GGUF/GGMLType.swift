/// The tensor element types of ggml, with the numeric values GGUF files store (ggml.h of llama.cpp b11434).
///
/// Every type knows its block size (elements per block) and the bytes one block takes, which is all the reader
/// needs to validate a tensor's byte size against the file.
public enum GGMLType: UInt32, Sendable, CaseIterable, CustomStringConvertible {
    case f32 = 0
    case f16 = 1
    case q4_0 = 2
    case q4_1 = 3
    case q5_0 = 6
    case q5_1 = 7
    case q8_0 = 8
    case q8_1 = 9
    case q2_K = 10
    case q3_K = 11
    case q4_K = 12
    case q5_K = 13
    case q6_K = 14
    case q8_K = 15
    case iq2_XXS = 16
    case iq2_XS = 17
    case iq3_XXS = 18
    case iq1_S = 19
    case iq4_NL = 20
    case iq3_S = 21
    case iq2_S = 22
    case iq4_XS = 23
    case i8 = 24
    case i16 = 25
    case i32 = 26
    case i64 = 27
    case f64 = 28
    case iq1_M = 29
    case bf16 = 30
    case tq1_0 = 34
    case tq2_0 = 35
    case mxfp4 = 39
    case nvfp4 = 40
    case q1_0 = 41
    case q2_0 = 42

    /// Elements per quantization block.
    public var blockSize: Int {
        switch self {
        case .f32, .f16, .bf16, .i8, .i16, .i32, .i64, .f64: return 1
        case .q4_0, .q4_1, .q5_0, .q5_1, .q8_0, .q8_1, .iq4_NL, .mxfp4: return 32
        case .nvfp4, .q2_0: return 64
        case .q1_0: return 128
        case .q2_K, .q3_K, .q4_K, .q5_K, .q6_K, .q8_K, .iq2_XXS, .iq2_XS, .iq3_XXS, .iq1_S, .iq3_S, .iq2_S,
            .iq4_XS, .iq1_M, .tq1_0, .tq2_0:
            return 256
        }
    }

    /// Bytes per quantization block.
    public var blockBytes: Int {
        switch self {
        case .f32, .i32: return 4
        case .f16, .bf16, .i16: return 2
        case .i8: return 1
        case .i64, .f64: return 8
        case .q4_0, .iq4_NL: return 18
        case .q4_1: return 20
        case .q5_0: return 22
        case .q5_1: return 24
        case .q8_0: return 34
        case .q8_1: return 36
        case .q2_K: return 84
        case .q3_K: return 110
        case .q4_K: return 144
        case .q5_K: return 176
        case .q6_K: return 210
        case .q8_K: return 292
        case .iq2_XXS: return 66
        case .iq2_XS: return 74
        case .iq3_XXS: return 98
        case .iq1_S: return 50
        case .iq3_S: return 110
        case .iq2_S: return 82
        case .iq4_XS: return 136
        case .iq1_M: return 56
        case .tq1_0: return 54
        case .tq2_0: return 66
        case .mxfp4: return 17
        case .nvfp4: return 36
        case .q1_0, .q2_0: return 18
        }
    }

    /// The name llama.cpp prints for the type (`Q4_1`, `F16`, …).
    public var description: String {
        switch self {
        case .f32: return "F32"
        case .f16: return "F16"
        case .q4_0: return "Q4_0"
        case .q4_1: return "Q4_1"
        case .q5_0: return "Q5_0"
        case .q5_1: return "Q5_1"
        case .q8_0: return "Q8_0"
        case .q8_1: return "Q8_1"
        case .q2_K: return "Q2_K"
        case .q3_K: return "Q3_K"
        case .q4_K: return "Q4_K"
        case .q5_K: return "Q5_K"
        case .q6_K: return "Q6_K"
        case .q8_K: return "Q8_K"
        case .iq2_XXS: return "IQ2_XXS"
        case .iq2_XS: return "IQ2_XS"
        case .iq3_XXS: return "IQ3_XXS"
        case .iq1_S: return "IQ1_S"
        case .iq4_NL: return "IQ4_NL"
        case .iq3_S: return "IQ3_S"
        case .iq2_S: return "IQ2_S"
        case .iq4_XS: return "IQ4_XS"
        case .i8: return "I8"
        case .i16: return "I16"
        case .i32: return "I32"
        case .i64: return "I64"
        case .f64: return "F64"
        case .iq1_M: return "IQ1_M"
        case .bf16: return "BF16"
        case .tq1_0: return "TQ1_0"
        case .tq2_0: return "TQ2_0"
        case .mxfp4: return "MXFP4"
        case .nvfp4: return "NVFP4"
        case .q1_0: return "Q1_0"
        case .q2_0: return "Q2_0"
        }
    }
}

extension GGMLType {
    /// The KV cache types llama.cpp b11434 accepts for `-ctk`/`-ctv` (common/arg.cpp's `kv_cache_types`), in its
    /// order. The pure-Swift and BLAS engines store `f16` and `q8_0` of them.
    public static let cacheTypes: [GGMLType] = [.f32, .f16, .bf16, .q8_0, .q4_0, .q4_1, .iq4_NL, .q5_0, .q5_1]

    /// The cache type named `name` as llama.cpp's `-ctk`/`-ctv` take it (`f16`, `q8_0`, …; any case), or nil.
    public init?(cacheTypeName name: String) {
        guard let type = Self.cacheTypes.first(where: { $0.cacheTypeName == name.lowercased() }) else { return nil }
        self = type
    }

    /// The name llama.cpp's `-ctk`/`-ctv` and llama-bench's `type_k`/`type_v` use: `f16`, `q8_0`, …
    public var cacheTypeName: String { description.lowercased() }

    /// Bytes of `count` values (a whole number of blocks) of this type.
    public func bytes(count: Int) -> Int { count / blockSize * blockBytes }
}
