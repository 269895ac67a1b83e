import SanadCore
import SanadStructured
import SanadTestSupport
import Testing

@Suite("JSON schema matcher")
struct JSONMatcherTests {
    func accepts(_ matcher: JSONMatcher, _ text: String) -> Bool {
        matcher.advanced(by: Array(text.utf8))?.isComplete ?? false
    }

    @Test("random valid documents are accepted byte by byte, mutations that break them are refused")
    func property() throws {
        var mutationsRefused = 0
        try forAll(cases: 300) { rng, c in
            let schema = SchemaMaker.make(&rng)
            let matcher = JSONMatcher(try CompiledSchema(schema: schema))
            var documents = DocumentMaker(root: schema, rng: rng)
            for _ in 0..<4 {
                let text = documents.text(schema, depth: 0)
                let value = try StrictJSON().parse(Array(text.utf8))
                #expect(validates(value, schema, root: schema), "\(c): the generator wrote an invalid \(text)")
                #expect(accepts(matcher, text), "\(c): refused \(text.debugDescription) for \(schema)")
                // Mutations: insert, delete or replace one byte; an accepted result must be valid.
                var bytes = Array(text.utf8)
                let at = documents.rng.int(0...bytes.count)
                switch documents.rng.int(0...2) {
                case 0: bytes.insert(documents.rng.pick(Array("{}[],:\" -.0a\\".utf8)), at: at)
                case 1: if at < bytes.count { bytes.remove(at: at) }
                default: if at < bytes.count { bytes[at] = documents.rng.pick(Array("{}[],:\"x9 .".utf8)) }
                }
                let valid = (try? StrictJSON().parse(bytes)).map { validates($0, schema, root: schema) } ?? false
                let accepted = matcher.advanced(by: bytes)?.isComplete ?? false
                if accepted {
                    #expect(
                        valid,
                        "\(c): accepted the invalid \(String(decoding: bytes, as: UTF8.self).debugDescription) for \(schema)"
                    )
                } else if !valid {
                    mutationsRefused += 1
                }
            }
            rng = documents.rng
        }
        #expect(mutationsRefused > 600)
    }

    @Test("layout: no leading blank, one blank at most between tokens, properties in schema order")
    func layout() throws {
        let schema: JSONValue = [
            "type": "object", "properties": ["b": ["type": "integer"], "a": ["type": "string"]],
            "required": ["b", "a"],
        ]
        let m = JSONMatcher(try CompiledSchema(schema: schema))
        #expect(accepts(m, #"{"b":1,"a":"x"}"#))
        #expect(accepts(m, #"{ "b" : 1 , "a": "x" }"#))
        #expect(!accepts(m, #" {"b":1,"a":"x"}"#))
        #expect(!accepts(m, #"{  "b":1,"a":"x"}"#))
        #expect(!accepts(m, #"{"a":"x","b":1}"#))
        #expect(!accepts(m, #"{"b":1,"a":"x"} "#))
        #expect(!accepts(m, #"{"b":1}"#))
    }

    @Test("numbers keep their bounds while being written")
    func numberBounds() throws {
        let m = JSONMatcher(try CompiledSchema(schema: ["type": "integer", "minimum": 10, "maximum": 25]))
        #expect(accepts(m, "10") && accepts(m, "25") && !accepts(m, "26") && !accepts(m, "9"))
        #expect(m.advanced(by: Array("3".utf8)) == nil)
        #expect(m.advanced(by: Array("-".utf8)) == nil)
        #expect(m.advanced(by: Array("1".utf8)) != nil)
        #expect(m.advanced(by: Array("10.".utf8)) == nil)
    }

    @Test("unsupported keywords and bad references are errors that name the JSON pointer")
    func errors() {
        func problem(_ schema: JSONValue) -> String {
            do {
                _ = try CompiledSchema(schema: schema)
                return "compiled"
            } catch { return error.description }
        }
        #expect(
            problem(["type": "object", "properties": ["x": ["type": "string", "uniqueItems": true]]]).hasPrefix(
                "schema at #/properties/x/uniqueItems:"))
        #expect(problem(["type": "string", "format": "email"]).hasPrefix("schema at #/format:"))
        #expect(problem(["$ref": "#/$defs/missing"]).hasPrefix("schema at #/$ref:"))
        #expect(problem(["type": "string", "pattern": "[a-z]+"]).hasPrefix("schema at #/pattern:"))
        #expect(problem(["$defs": ["a": ["$ref": "#/$defs/a"]], "$ref": "#/$defs/a"]).contains("cycle"))
        #expect(problem([:]).contains("no type"))
    }

    @Test("anyOfs of the same $ref nested 15 deep (6^14 paths) compile and match at once: each definition once")
    func sharedDefinitions() throws {
        let started = ContinuousClock.now
        let matcher = JSONMatcher(try CompiledSchema(schema: fanOutSchema(depth: 15, width: 6)))
        #expect(accepts(matcher, "12345") && !accepts(matcher, "\"x\""))
        #expect(started.duration(to: .now) < .seconds(2))
    }

    @Test("a value standing for more alternatives than the work budget is refused, naming the budget")
    func overBudget() throws {
        let consts = (0...CompiledSchema.maximumAlternatives).map { JSONValue.object(["const": .number(Double($0))]) }
        let error = #expect(throws: SchemaError.self) { try CompiledSchema(schema: .object(["anyOf": .array(consts)])) }
        #expect(error?.description.contains("work budget is \(CompiledSchema.maximumAlternatives)") == true)
    }

    @Test("a recursive schema through $ref is matched to a bounded depth")
    func recursion() throws {
        let schema: JSONValue = [
            "$defs": [
                "node": [
                    "type": "object", "properties": ["children": ["type": "array", "items": ["$ref": "#/$defs/node"]]],
                    "required": ["children"],
                ]
            ],
            "$ref": "#/$defs/node",
        ]
        let m = JSONMatcher(try CompiledSchema(schema: schema))
        #expect(accepts(m, #"{"children":[{"children":[]},{"children":[{"children":[]}]}]}"#))
        let deep = String(repeating: #"{"children":["#, count: 100)
        #expect(m.advanced(by: Array(deep.utf8)) == nil)
    }
}
