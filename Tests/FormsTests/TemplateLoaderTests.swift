import FormsPlugin
import Foundation
import SanadCore
import Testing

/// The strict loader: the shipped templates load; every kind of mistake names the file and the key path.
@Suite("form templates")
struct TemplateLoaderTests {
    @Test("both shipped templates load, in English, Arabic and Spanish")
    func shipped() throws {
        let catalog = try FormsFixture.catalog()
        #expect(catalog.templates.map(\.metadata.id) == ["dmv-renewal", "ds-160"])
        for t in catalog.templates {
            #expect(t.metadata.languageSupport == ["en", "ar", "es"])
            for f in t.sections.flatMap(\.fields) {
                for lang in ["en", "ar", "es"] { #expect(f.aiPrompt.values[lang]?.isEmpty == false) }
            }
        }
        let dmv = try catalog.template("dmv-renewal")
        #expect(dmv.metadata.lookup?.entries.count ?? 0 >= 5)
        #expect(dmv.steps.map(\.id) == ["welcome", "state", "identity", "address", "eligibility", "fees", "review"])
    }

    /// A minimal valid template, as a JSON object to break.
    static func minimal() -> [String: JSONValue] {
        func t(_ s: String) -> JSONValue { .object(["en": .string(s)]) }
        return [
            "metadata": .object([
                "id": .string("mini"), "name": t("Mini"), "version": .string("1"),
                "languageSupport": .array([.string("en")]),
            ]),
            "schema": .object([
                "sections": .array([
                    .object([
                        "id": .string("s"), "title": t("S"),
                        "fields": .array([
                            .object([
                                "id": .string("a"), "label": t("A"), "type": .string("yesNo"), "aiPrompt": t("A?"),
                            ]),
                            .object(["id": .string("b"), "label": t("B"), "type": .string("text"), "aiPrompt": t("B?")]
                            ),
                        ]),
                    ])
                ])
            ]),
            "conversationFlow": .object([
                "steps": .array([
                    .object(["id": .string("one"), "title": t("One"), "expectedFields": .array([.string("a")])]),
                    .object(["id": .string("two"), "title": t("Two"), "expectedFields": .array([.string("b")])]),
                ])
            ]),
            "review": .object(["checklists": .array([]), "submissionGuidance": t("Go.")]),
        ]
    }

    func problem(_ change: (inout [String: JSONValue]) -> Void) -> String {
        var root = Self.minimal()
        change(&root)
        let reader = TemplateReader(file: "mini.form.json") { _ in [] }
        do {
            _ = try reader.read(Array(JSONValue.object(root).jsonString.utf8))
            return "loaded"
        } catch {
            return "\(error)"
        }
    }

    static func setStep(_ root: inout [String: JSONValue], _ i: Int, _ key: String, _ value: JSONValue) {
        guard case .object(var flow) = root["conversationFlow"], case .array(var steps) = flow["steps"],
            case .object(var step) = steps[i]
        else { return }
        step[key] = value
        steps[i] = .object(step)
        flow["steps"] = .array(steps)
        root["conversationFlow"] = .object(flow)
    }

    @Test("the minimal template loads")
    func minimalLoads() { #expect(problem { _ in } == "loaded") }

    @Test("an unknown key is an error naming the file and key path")
    func unknownKey() {
        let p = problem { Self.setStep(&$0, 1, "validationRule", .array([])) }
        #expect(p.hasPrefix("mini.form.json: conversationFlow.steps[1].validationRule: unknown key"), "\(p)")
    }

    @Test("a step naming a missing field is an error")
    func missingField() {
        let p = problem { Self.setStep(&$0, 1, "expectedFields", .array([.string("b"), .string("zz")])) }
        #expect(p.contains("conversationFlow.steps[1].expectedFields[1]: no field 'zz'"), "\(p)")
    }

    @Test("a jump back to an earlier step (a cycle) is an error")
    func cycle() {
        let p = problem {
            Self.setStep(
                &$0, 1, "conditionalLogic",
                .object([
                    "next": .array([
                        .object([
                            "when": .object(["field": .string("a"), "equals": .string("yes")]), "goto": .string("one"),
                        ])
                    ])
                ]))
        }
        #expect(p.contains("conversationFlow.steps[1].conditionalLogic.next[0].goto") && p.contains("cycle"), "\(p)")
    }

    @Test("a field no step asks, a condition on a later field, a missing language, bad JSON: each named")
    func otherMistakes() {
        let orphan = problem { Self.setStep(&$0, 1, "expectedFields", .array([])) }
        #expect(orphan.contains("schema.sections[0].fields[1].id: field 'b' is in no step"), "\(orphan)")
        let later = problem {
            Self.setStep(
                &$0, 0, "conditionalLogic",
                .object(["showIf": .object(["field": .string("b"), "answered": .bool(true)])]))
        }
        #expect(later.contains("conversationFlow.steps[0].conditionalLogic.showIf: reads 'b'"), "\(later)")
        let language = problem {
            guard case .object(var m) = $0["metadata"] else { return }
            m["languageSupport"] = .array([.string("en"), .string("ar")])
            $0["metadata"] = .object(m)
        }
        #expect(language.contains("metadata.name.ar: missing"), "\(language)")
        let reader = TemplateReader(file: "x.form.json") { _ in [] }
        #expect(throws: FormError.self) { _ = try reader.read(Array("{\"metadata\": {},}".utf8)) }
    }
}
