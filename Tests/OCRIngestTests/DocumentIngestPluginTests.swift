import Foundation
import OCRIngestPlugin
import SanadChat
import SanadCore
import SanadTestSupport
import Testing

@Suite("ocr-ingest plugin: the ingest_document tool")
struct DocumentIngestPluginTests {
    func plugin(_ options: [String: JSONValue] = [:]) throws -> DocumentIngestPlugin {
        try DocumentIngestPlugin(
            context: PluginContext(
                options: options, dataDirectory: try TestPaths.temporaryDirectory(),
                now: { Date(timeIntervalSince1970: 1_262_304_000) }))  // 2010-01-01
    }

    @Test("a zone as text comes back with its proposals; kinds and arguments are checked")
    func tool() async throws {
        let tool = try #require(try plugin().tools.first { $0.name == "ingest_document" })
        let zone = Specimen.td3.joined(separator: "\n")
        let result = try await tool.call(.object(["text": .string(zone), "documentId": .string("p1")]))
        #expect(result["kind"]?.stringValue == "mrz" && result["mrz"]?["valid"] == .bool(true))
        let numbers = result["proposals"]?.arrayValue?.filter { $0["fieldId"]?.stringValue == "passportNumber" }
        #expect(numbers?.first?["value"]?.stringValue == "L898902C3")
        #expect(numbers?.first?["evidence"]?["documentId"]?.stringValue == "p1")
        await #expect(throws: ToolError.self) {
            try await tool.call(.object(["text": .string("x"), "kind": .string("bill")]))
        }
        await #expect(throws: ToolError.self) { try await tool.call(.object([:])) }
        await #expect(throws: ToolError.self) {
            try await tool.call(.object(["text": .string("x"), "imagePath": .string("/tmp/x.png")]))
        }
    }

    @Test("options are strict: an unknown key names the plugin and the key")
    func options() throws {
        #expect(throws: PluginError.self) { try plugin(["lang": .string("ara")]) }
        #expect(try plugin(["language": .string("eng+ara")]).language == "eng+ara")
    }

    @Test("image signatures are recognised; text is not an image")
    func signatures() throws {
        let dir = try TestPaths.temporaryDirectory()
        let png = dir.appendingPathComponent("a.png")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]).write(to: png)
        let txt = dir.appendingPathComponent("a.txt")
        try Data("P<UTO".utf8).write(to: txt)
        #expect(DocumentIngest.isImage(path: png.path) && !DocumentIngest.isImage(path: txt.path))
    }
}
