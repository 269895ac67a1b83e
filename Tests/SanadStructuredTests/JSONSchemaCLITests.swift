import Foundation
import SanadCore
import SanadTestSupport
import Testing

@Suite("sanad generate --json-schema", .serialized)
struct JSONSchemaCLITests {
    func schemaFile(_ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sanad-schema-\(UUID().uuidString).json")
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test("a schema outside the subset is a usage error naming the file and the JSON pointer")
    func badSchema() throws {
        let file = try schemaFile(#"{"type":"object","properties":{"x":{"type":"string","format":"email"}}}"#)
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try SanadCLI.run(["generate", "--json-schema", file.path, "hi"])
        #expect(r.status == 64)
        #expect(r.stderr.contains(file.path) && r.stderr.contains("#/properties/x/format"), "\(r.stderr)")
    }

    @Test("an -n below the schema's shortest document is refused before the model loads, naming the minimum")
    func tooFewTokens() throws {
        // {"name":"aa","tags":[""]}: 25 bytes.
        let file = try schemaFile(
            #"{"type":"object","properties":{"name":{"type":"string","minLength":2},"tags":{"type":"array","items":{"type":"string"},"minItems":1}},"required":["name","tags"]}"#
        )
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try SanadCLI.run(["generate", "-m", "/nonexistent.gguf", "-n", "24", "--json-schema", file.path, "hi"])
        #expect(r.status == 64 && r.stderr.contains("use -n 25 or more") && r.stderr.contains(file.path), "\(r.stderr)")
    }

    @Test(
        "a document that closes on the last token -n allows is whole: printed, exit status 0",
        .enabled(if: SmolLM2Model.url != nil, "models/SmolLM2-135M-Instruct.Q4_1.gguf is absent"))
    func closesAtTheLimit() throws {
        let schema =
            #"{"type":"object","properties":{"name":{"type":"string","minLength":2},"tags":{"type":"array","items":{"type":"string"},"minItems":1}},"required":["name","tags"]}"#
        let file = try schemaFile(schema)
        defer { try? FileManager.default.removeItem(at: file) }
        let model = try #require(SmolLM2Model.url).path
        for n in ["25", "30"] {
            let r = try SanadCLI.run([
                "generate", "-m", model, "--backend", "pure-swift", "--temp", "0", "-n", n, "--chat", "--json-schema",
                file.path, "List tags of a fruit as JSON.",
            ])
            #expect(r.status == 0, "-n \(n): \(r.stderr)")
            let value = try StrictJSON().parse(Array(r.stdout.utf8))
            #expect(validates(value, try StrictJSON().parse(Array(schema.utf8)), root: .null), "-n \(n): \(r.stdout)")
        }
    }

    @Test(
        "the output is a valid document on the pure-swift engine",
        .enabled(if: SmolLM2Model.url != nil, "models/SmolLM2-135M-Instruct.Q4_1.gguf is absent"))
    func generates() throws {
        let schema =
            #"{"type":"object","properties":{"name":{"type":"string","maxLength":16},"age":{"type":"integer","minimum":0,"maximum":120}},"required":["name","age"]}"#
        let file = try schemaFile(schema)
        defer { try? FileManager.default.removeItem(at: file) }
        let model = try #require(SmolLM2Model.url).path
        let r = try SanadCLI.run([
            "generate", "-m", model, "--backend", "pure-swift", "--temp", "0", "-n", "64", "--chat", "--json-schema",
            file.path, "Describe a person as JSON.",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let value = try StrictJSON().parse(Array(r.stdout.utf8))
        #expect(validates(value, try StrictJSON().parse(Array(schema.utf8)), root: .null))
    }

    @Test("the llama engine applies --json-schema as a grammar; --grammar is the llama engine's only")
    func llamaGrammar() throws {
        let model = try #require(SmolLM2Model.url).path
        let schema =
            #"{"type":"object","properties":{"ok":{"type":"boolean"},"n":{"type":"integer","minimum":-5,"maximum":30}},"required":["ok","n"]}"#
        let file = try schemaFile(schema)
        defer { try? FileManager.default.removeItem(at: file) }
        if LlamaModel.libraryComputes {
            let llama = try SanadCLI.run([
                "generate", "-m", model, "--backend", "llama", "--temp", "0", "-n", "48", "--chat", "--json-schema",
                file.path, "Reply as JSON.",
            ])
            #expect(llama.status == 0, "\(llama.stderr)")
            let value = try StrictJSON().parse(Array(llama.stdout.utf8))
            #expect(validates(value, try StrictJSON().parse(Array(schema.utf8)), root: .null))
        }
        let grammar = try schemaFile(#"root ::= "yes" | "no""# + "\n")
        defer { try? FileManager.default.removeItem(at: grammar) }
        let pure = try SanadCLI.run([
            "generate", "-m", model, "--backend", "pure-swift", "-n", "8", "--grammar", grammar.path, "hi",
        ])
        #expect(pure.status != 0 && pure.stdout.isEmpty && pure.stderr.contains("llama engine only"), "\(pure.stderr)")
        let both = try SanadCLI.run([
            "generate", "-m", model, "--grammar", grammar.path, "--json-schema", file.path, "hi",
        ])
        #expect(both.status == 64, "\(both.stderr)")
    }
}
