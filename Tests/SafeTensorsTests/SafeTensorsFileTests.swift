import Foundation
import SafeTensors
import Testing

/// Writes `header` (raw JSON text) and `data` as a safetensors file; `declaredLength` overrides the length prefix.
private func writeFile(_ header: String, data: [UInt8] = [], declaredLength: UInt64? = nil) throws -> String {
    let json = Array(header.utf8)
    var bytes: [UInt8] = []
    let length = declaredLength ?? UInt64(json.count)
    for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: length >> (8 * UInt64(i)))) }
    bytes += json + data
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-st-\(UUID().uuidString).safetensors")
    try Data(bytes).write(to: url)
    return url.path
}

private func floatBytes(_ values: [Float]) -> [UInt8] {
    values.flatMap { v -> [UInt8] in
        let b = v.bitPattern
        return (0..<4).map { UInt8(truncatingIfNeeded: b >> (8 * UInt32($0))) }
    }
}

@Test func readsF32F16AndBF16TensorsAndMetadata() throws {
    // F32 [2] = 1.5, -2; F16 [2] = 1.0 (0x3C00), -0.5 (0xB800); BF16 [1] = 3.0 (0x4040)
    let data = floatBytes([1.5, -2]) + [0x00, 0x3C, 0x00, 0xB8] + [0x40, 0x40]
    let header =
        #"{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"#
        + #""h":{"dtype":"F16","shape":[2],"data_offsets":[8,12]},"b":{"dtype":"BF16","shape":[1],"data_offsets":[12,14]}}"#
    let file = try SafeTensorsFile(path: try writeFile(header, data: data))
    #expect(file.metadata == ["format": "pt"])
    #expect(file.names == ["a", "h", "b"])
    #expect(try file.floats("a", shape: [2]) == [1.5, -2])
    #expect(try file.floats("h") == [1, -0.5])
    #expect(try file.floats("b") == [3])
    #expect(throws: SafeTensorsError.wrongShape(path: file.path, tensor: "a", expected: [1, 2], found: [2])) {
        try file.floats("a", shape: [1, 2])
    }
    #expect(throws: SafeTensorsError.missingTensor(path: file.path, name: "zz")) { try file.floats("zz") }
}

@Test func knownButUnreadableDTypeIsRefusedByName() throws {
    let path = try writeFile(
        #"{"ids":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}"#, data: Array(repeating: 0, count: 8))
    let file = try SafeTensorsFile(path: path)
    #expect(throws: SafeTensorsError.unsupportedDType(path: path, tensor: "ids", dtype: "I64")) {
        try file.floats("ids")
    }
}

/// A hostile or broken file and the error it must get.
struct HostileCase: CustomTestStringConvertible, Sendable {
    let name: String
    let header: String
    let data: [UInt8]
    let declaredLength: UInt64?
    let check: @Sendable (SafeTensorsError) -> Bool
    var testDescription: String { name }
}

private func tensorError(_ tensor: String) -> @Sendable (SafeTensorsError) -> Bool {
    { error in
        if case .malformedTensor(_, let t, _) = error { return t == tensor }
        return false
    }
}

let hostileCases: [HostileCase] = [
    HostileCase(
        name: "header length beyond the file", header: "{}", data: [], declaredLength: 1000,
        check: { if case .truncated = $0 { return true } else { return false } }),
    HostileCase(
        name: "header length over the limit", header: "{}", data: [], declaredLength: UInt64.max,
        check: { if case .malformedHeader = $0 { return true } else { return false } }),
    HostileCase(
        name: "header not JSON", header: "{nope", data: [], declaredLength: nil,
        check: { if case .malformedHeader = $0 { return true } else { return false } }),
    HostileCase(
        name: "unknown dtype", header: #"{"w":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}}"#, data: [0],
        declaredLength: nil,
        check: {
            $0 == .unsupportedDType(path: "", tensor: "w", dtype: "Q4")
                || { if case .unsupportedDType(_, "w", "Q4") = $0 { return true } else { return false } }($0)
        }),
    HostileCase(
        name: "range past the data", header: #"{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
        data: [0, 0, 0, 0], declaredLength: nil, check: tensorError("w")),
    HostileCase(
        name: "shape disagrees with range", header: #"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#,
        data: [0, 0, 0, 0], declaredLength: nil, check: tensorError("w")),
    HostileCase(
        name: "shape overflows", header: #"{"w":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,4]}}"#,
        data: [0, 0, 0, 0], declaredLength: nil, check: tensorError("w")),
    HostileCase(
        name: "negative dimension", header: #"{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}"#,
        data: [0, 0, 0, 0], declaredLength: nil, check: tensorError("w")),
    HostileCase(
        name: "reversed offsets", header: #"{"w":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}}"#,
        data: [0, 0, 0, 0], declaredLength: nil, check: tensorError("w")),
    HostileCase(
        name: "negative offset", header: #"{"w":{"dtype":"U8","shape":[2],"data_offsets":[-2,0]}}"#,
        data: [0, 0, 0, 0], declaredLength: nil, check: tensorError("w")),
    HostileCase(
        name: "overlapping tensors",
        header:
            #"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}}"#,
        data: [0, 0, 0, 0], declaredLength: nil,
        check: {
            if case .malformedTensor(_, let t, let what) = $0 {
                return t == "b" && what.contains("'a'")
            } else {
                return false
            }
        }),
    HostileCase(
        name: "fractional shape", header: #"{"w":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}}"#, data: [0],
        declaredLength: nil, check: tensorError("w")),
    HostileCase(
        name: "string offsets", header: #"{"w":{"dtype":"U8","shape":[1],"data_offsets":"0"}}"#, data: [0],
        declaredLength: nil, check: tensorError("w")),
    HostileCase(
        name: "three offsets", header: #"{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1,1]}}"#, data: [0],
        declaredLength: nil, check: tensorError("w")),
    HostileCase(
        name: "metadata not strings", header: #"{"__metadata__":{"a":1}}"#, data: [], declaredLength: nil,
        check: tensorError("__metadata__")),
]

@Test(arguments: hostileCases)
func hostileFileGetsAnErrorNamingTheFileAndTensor(_ c: HostileCase) throws {
    let path = try writeFile(c.header, data: c.data, declaredLength: c.declaredLength)
    do {
        _ = try SafeTensorsFile(path: path)
        Issue.record("\(c.name): opened without an error")
    } catch let error as SafeTensorsError {
        #expect(c.check(error), "\(c.name): \(error)")
        #expect(error.description.contains(path))
    }
}

@Test func shortFileAndNonRegularFilesAreRefused() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-st-short-\(UUID().uuidString)")
    try Data([1, 2, 3]).write(to: url)
    #expect(throws: SafeTensorsError.truncated(path: url.path, what: "the 8-byte header length is missing")) {
        try SafeTensorsFile(path: url.path)
    }
    #expect(throws: SafeTensorsError.cannotOpen(path: "/", reason: "not a regular file (a directory)")) {
        try SafeTensorsFile(path: "/")
    }
    let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-st-fifo-\(UUID().uuidString)").path
    #expect(mkfifo(fifo, 0o600) == 0)
    #expect(throws: SafeTensorsError.cannotOpen(path: fifo, reason: "not a regular file (a FIFO)")) {
        try SafeTensorsFile(path: fifo)
    }
    #expect(throws: SafeTensorsError.self) { try SafeTensorsFile(path: "/nonexistent/model.safetensors") }
}

/// Every truncation of a valid file is refused with an error, never a crash.
@Test func everyTruncationIsRefused() throws {
    let header = #"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#
    let full = try Data(contentsOf: URL(fileURLWithPath: try writeFile(header, data: floatBytes([1, 2]))))
    for length in 0..<full.count {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-st-cut-\(UUID().uuidString)")
        try full.prefix(length).write(to: url)
        #expect(throws: SafeTensorsError.self, "length \(length)") { try SafeTensorsFile(path: url.path) }
        try? FileManager.default.removeItem(at: url)
    }
}

private let miniLMPath: String = {
    let models = ProcessInfo.processInfo.environment["SANAD_MODELS"] ?? ""
    return URL(fileURLWithPath: models.isEmpty ? "models" : models)
        .appendingPathComponent("all-MiniLM-L6-v2/model.safetensors").path
}()

@Test(
    .enabled(if: FileManager.default.fileExists(atPath: miniLMPath), "all-MiniLM-L6-v2 not installed (scripts/setup)"))
func miniLMModelFileValidates() throws {
    let file = try SafeTensorsFile(path: miniLMPath)
    #expect(file.tensors.count == 104)
    let words = try file.floats("embeddings.word_embeddings.weight", shape: [30522, 384])
    #expect(words.count == 30522 * 384)
    #expect(file.metadata["format"] == "pt")
}
