import Foundation
import SanadCore

/// Reads a form template strictly (`StrictJSON`): an unknown key, a wrong type, a step naming a field the schema
/// lacks, a field no step asks, a jump backwards (a cycle in the flow) or a text missing a supported language is an
/// error naming the file and the key path.
public struct TemplateReader {
    public let file: String
    /// Reads the lookup file a template names (relative to the template's folder).
    let readFile: (String) throws -> [UInt8]

    public init(file: String, readFile: @escaping (String) throws -> [UInt8]) {
        self.file = file
        self.readFile = readFile
    }

    /// Reads the template at `url`; its lookup file is read from the same folder.
    public static func load(_ url: URL) throws -> FormTemplate {
        let folder = url.deletingLastPathComponent()
        let reader = TemplateReader(file: url.path) { name in
            guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else {
                throw FormError.invalidTemplate(
                    file: folder.appendingPathComponent(name).path, keyPath: "", problem: "cannot be read")
            }
            return Array(data)
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw FormError.invalidTemplate(file: url.path, keyPath: "", problem: "cannot be read")
        }
        return try reader.read(Array(data))
    }

    func fail(_ path: String, _ problem: String) -> FormError {
        .invalidTemplate(file: file, keyPath: path, problem: problem)
    }

    /// Parses and checks the template text.
    public func read(_ bytes: [UInt8]) throws -> FormTemplate {
        let root: JSONValue
        do { root = try StrictJSON().parse(bytes) } catch { throw fail("", "\(error)") }
        let top = try object(root, "", keys: ["metadata", "schema", "conversationFlow", "review"])
        let metaObject = try object(top.required("metadata"), "metadata", keys: Self.metadataKeys)
        let languages = try strings(metaObject.required("languageSupport"), "metadata.languageSupport")
        guard !languages.isEmpty else { throw fail("metadata.languageSupport", "name at least one language") }
        var context = Context(languages: languages)
        let name = try context.text(metaObject.required("name"), "metadata.name", self)
        let id = try identifier(metaObject.required("id"), "metadata.id")
        let version = try string(metaObject.required("version"), "metadata.version")
        let lookup = try metaObject.optional("lookup").map { try readLookup($0, "metadata.lookup") }
        let schema = try object(top.required("schema"), "schema", keys: ["sections"])
        let sections = try array(schema.required("sections"), "schema.sections").enumerated().map {
            try readSection($0.element, "schema.sections[\($0.offset)]", &context)
        }
        let flow = try object(top.required("conversationFlow"), "conversationFlow", keys: ["steps"])
        let steps = try array(flow.required("steps"), "conversationFlow.steps").enumerated().map {
            try readStep($0.element, "conversationFlow.steps[\($0.offset)]", &context)
        }
        let review = try readReview(top.required("review"), "review", &context)
        let template = FormTemplate(
            metadata: .init(id: id, name: name, version: version, languageSupport: languages, lookup: lookup),
            sections: sections, steps: steps, review: review, file: file)
        try checkReferences(template, context)
        return template
    }

    static let metadataKeys = ["id", "name", "version", "languageSupport", "lookup"]

    // MARK: References and the flow

    /// Every id is unique; each field is asked by exactly one step; steps, conditions and rules name existing
    /// fields; jumps go forward (a jump to the same or an earlier step is a cycle).
    func checkReferences(_ t: FormTemplate, _ context: Context) throws {
        var fieldPaths: [String: String] = [:]
        for (s, section) in t.sections.enumerated() {
            for (f, field) in section.fields.enumerated() {
                let path = "schema.sections[\(s)].fields[\(f)].id"
                if let first = fieldPaths[field.id] {
                    throw fail(path, "field '\(field.id)' is already defined at \(first)")
                }
                fieldPaths[field.id] = path
            }
        }
        guard !t.steps.isEmpty else { throw fail("conversationFlow.steps", "name at least one step") }
        var stepIndex: [String: Int] = [:]
        var askedBy: [String: String] = [:]
        for (i, step) in t.steps.enumerated() {
            let path = "conversationFlow.steps[\(i)]"
            if stepIndex[step.id] != nil { throw fail(path + ".id", "step '\(step.id)' is defined twice") }
            stepIndex[step.id] = i
            for (k, field) in step.expectedFields.enumerated() {
                let at = "\(path).expectedFields[\(k)]"
                guard fieldPaths[field] != nil else { throw fail(at, "no field '\(field)' in schema.sections") }
                if let other = askedBy[field] { throw fail(at, "field '\(field)' is already asked by step '\(other)'") }
                askedBy[field] = step.id
            }
            for key in step.conditionalLogic.fields.keys.sorted() where !step.expectedFields.contains(key) {
                throw fail(
                    "\(path).conditionalLogic.fields.\(key)", "'\(key)' is not one of this step's expectedFields")
            }
            for (r, rule) in step.validationRules.enumerated() {
                var named = [rule.field]
                switch rule.kind {
                case .dateAfter(let other), .dateBefore(let other): named.append(other)
                case .validUntil(let from, let plusDays, _, let exempt):
                    named += [from] + [plusDays, exempt?.field].compactMap { $0 }
                case .ageBetween, .lookupPattern, .lookupPrefixRanges: break
                }
                for f in named where fieldPaths[f] == nil {
                    throw fail("\(path).validationRules[\(r)]", "no field '\(f)' in schema.sections")
                }
            }
        }
        for (id, path) in fieldPaths.sorted(by: { $0.value < $1.value }) where askedBy[id] == nil {
            throw fail(path, "field '\(id)' is in no step's expectedFields, so it would never be asked")
        }
        for (path, condition) in context.conditions {
            for f in condition.fields where fieldPaths[f] == nil {
                throw fail(path, "the condition names no field of the schema: '\(f)'")
            }
        }
        for (k, reminder) in t.review.reminders.enumerated() {
            let at = "review.reminders[\(k)].fieldId"
            guard let field = t.field(reminder.field) else {
                throw fail(at, "no field '\(reminder.field)' in schema.sections")
            }
            guard field.type == .date else { throw fail(at, "'\(reminder.field)' is not a date field") }
        }
        if let lookup = t.metadata.lookup, fieldPaths[lookup.keyField] == nil {
            throw fail("metadata.lookup.keyField", "no field '\(lookup.keyField)' in schema.sections")
        }
        for (i, step) in t.steps.enumerated() {
            for (j, jump) in step.conditionalLogic.next.enumerated() {
                let at = "conversationFlow.steps[\(i)].conditionalLogic.next[\(j)].goto"
                guard let target = stepIndex[jump.goto] else { throw fail(at, "no step '\(jump.goto)'") }
                if target <= i {
                    throw fail(
                        at,
                        "a jump from step '\(step.id)' back to '\(jump.goto)' makes a cycle in the flow; jumps go to later steps"
                    )
                }
            }
        }
        try checkConditionOrder(t)
        for (s, section) in t.sections.enumerated() {
            for (f, field) in section.fields.enumerated() {
                let path = "schema.sections[\(s)].fields[\(f)]"
                if field.type == .select && field.options.isEmpty {
                    throw fail(path + ".options", "a select field needs at least one option")
                }
                if field.type != .select && !field.options.isEmpty {
                    throw fail(path + ".options", "only a select field has options")
                }
            }
        }
    }

    /// Flow conditions may only read fields asked earlier: a step's `showIf` fields of earlier steps, a field's
    /// condition fields before it, a jump's fields of this or earlier steps. A condition on a later field could
    /// never hold when it is evaluated.
    func checkConditionOrder(_ t: FormTemplate) throws {
        var position: [String: (step: Int, index: Int)] = [:]
        for (i, step) in t.steps.enumerated() {
            for (k, f) in step.expectedFields.enumerated() { position[f] = (i, k) }
        }
        func before(_ field: String, _ limit: (step: Int, index: Int)) -> Bool {
            guard let p = position[field] else { return true }  // reported as a missing field
            return p.step < limit.step || (p.step == limit.step && p.index < limit.index)
        }
        for (i, step) in t.steps.enumerated() {
            let path = "conversationFlow.steps[\(i)].conditionalLogic"
            let logic = step.conditionalLogic
            for f in logic.showIf?.fields ?? [] where !before(f, (i, -1)) {
                throw fail(path + ".showIf", "reads '\(f)', which is not asked before this step")
            }
            for (field, condition) in logic.fields.sorted(by: { $0.key < $1.key }) {
                let own = position[field] ?? (i, 0)
                for f in condition.fields where !before(f, own) {
                    throw fail("\(path).fields.\(field)", "reads '\(f)', which is not asked before '\(field)'")
                }
            }
            for (j, jump) in logic.next.enumerated() {
                for f in jump.when.fields where !before(f, (i, Int.max)) {
                    throw fail("\(path).next[\(j)].when", "reads '\(f)', which is not asked by this or an earlier step")
                }
            }
        }
    }

    // MARK: Parts

    func readLookup(_ value: JSONValue, _ path: String) throws -> FormTemplate.Lookup {
        let o = try object(value, path, keys: ["file", "keyField"])
        let name = try string(o.required("file"), path + ".file")
        guard !name.contains("/"), !name.hasPrefix(".") else {
            throw fail(path + ".file", "name a file beside the template (no folders)")
        }
        let bytes = try readFile(name)
        let table: JSONValue
        do { table = try StrictJSON().parse(bytes) } catch { throw fail(path + ".file", "\(name): \(error)") }
        guard let entries = table["entries"]?.objectValue, !entries.isEmpty else {
            throw fail(path + ".file", "\(name): needs an object \"entries\" of keys to facts")
        }
        var labels: [String: [String: String]] = [:]
        for (fact, texts) in table["factLabels"]?.objectValue ?? [:] {
            guard let byLanguage = texts.objectValue?.compactMapValues(\.stringValue), byLanguage["en"] != nil else {
                throw fail(path + ".file", "\(name): factLabels.\(fact): expected {\"en\": …, …}")
            }
            labels[fact] = byLanguage
        }
        return .init(
            file: name, keyField: try identifier(o.required("keyField"), path + ".keyField"), entries: entries,
            factLabels: labels)
    }

    func readSection(_ value: JSONValue, _ path: String, _ c: inout Context) throws -> FormTemplate.Section {
        let o = try object(value, path, keys: ["id", "title", "description", "fields"])
        return .init(
            id: try identifier(o.required("id"), path + ".id"),
            title: try c.text(o.required("title"), path + ".title", self),
            description: try o.optional("description").map { try c.text($0, path + ".description", self) },
            fields: try array(o.required("fields"), path + ".fields").enumerated().map {
                try readField($0.element, "\(path).fields[\($0.offset)]", &c)
            })
    }

    func readField(_ value: JSONValue, _ path: String, _ c: inout Context) throws -> FormTemplate.Field {
        let o = try object(value, path, keys: ["id", "label", "type", "required", "options", "validation", "aiPrompt"])
        let typeName = try string(o.required("type"), path + ".type")
        guard let type = FieldType(rawValue: typeName) else {
            throw fail(
                path + ".type",
                "unknown type '\(typeName)'; types: \(FieldType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let required = try o.optional("required").map { v -> Bool in
            guard let b = v.boolValue else { throw fail(path + ".required", "expected true or false, found \(v)") }
            return b
        }
        let options = try o.optional("options").map { v in
            try array(v, path + ".options").enumerated().map { i, item in
                let at = "\(path).options[\(i)]"
                let oo = try object(item, at, keys: ["value", "label"])
                return FormTemplate.Option(
                    value: try string(oo.required("value"), at + ".value"),
                    label: try c.text(oo.required("label"), at + ".label", self))
            }
        }
        return .init(
            id: try identifier(o.required("id"), path + ".id"),
            label: try c.text(o.required("label"), path + ".label", self),
            type: type, required: required ?? true, options: options ?? [],
            validation: try o.optional("validation").map { try readValidation($0, path + ".validation", &c) } ?? .none,
            aiPrompt: try c.text(o.required("aiPrompt"), path + ".aiPrompt", self))
    }

    func readValidation(_ value: JSONValue, _ path: String, _ c: inout Context) throws -> FieldValidation {
        let o = try object(
            value, path,
            keys: ["minLength", "maxLength", "pattern", "patternHint", "minimum", "maximum", "date", "latinOnly"])
        func count(_ key: String) throws -> Int? {
            try o.optional(key).map { v in
                guard let n = v.intValue, n >= 0, n <= 10_000 else {
                    throw fail("\(path).\(key)", "expected a whole number 0…10000, found \(v)")
                }
                return n
            }
        }
        func number(_ key: String) throws -> Double? {
            try o.optional(key).map { v in
                guard let n = v.doubleValue else { throw fail("\(path).\(key)", "expected a number, found \(v)") }
                return n
            }
        }
        let pattern = try o.optional("pattern").map { try string($0, path + ".pattern") }
        if let pattern {
            do { _ = try NSRegularExpression(pattern: pattern) } catch {
                throw fail(path + ".pattern", "not a valid regular expression: \(pattern)")
            }
        }
        let dateName = try o.optional("date").map { try string($0, path + ".date") }
        var date: FieldValidation.DateLimit?
        if let dateName {
            guard let d = FieldValidation.DateLimit(rawValue: dateName) else {
                throw fail(path + ".date", "expected \"past\" or \"future\", found \"\(dateName)\"")
            }
            date = d
        }
        let latin = try o.optional("latinOnly").map { v -> Bool in
            guard let b = v.boolValue else { throw fail(path + ".latinOnly", "expected true or false, found \(v)") }
            return b
        }
        return FieldValidation(
            minLength: try count("minLength"), maxLength: try count("maxLength"), pattern: pattern,
            patternHint: try o.optional("patternHint").map { try c.text($0, path + ".patternHint", self) },
            minimum: try number("minimum"), maximum: try number("maximum"), date: date, latinOnly: latin ?? false)
    }

    func readStep(_ value: JSONValue, _ path: String, _ c: inout Context) throws -> FormTemplate.Step {
        let o = try object(
            value, path,
            keys: ["id", "title", "description", "expectedFields", "validationRules", "conditionalLogic"])
        let rules = try o.optional("validationRules").map { v in
            try array(v, path + ".validationRules").enumerated().map {
                try readRule($0.element, "\(path).validationRules[\($0.offset)]", &c)
            }
        }
        return .init(
            id: try identifier(o.required("id"), path + ".id"),
            title: try c.text(o.required("title"), path + ".title", self),
            description: try o.optional("description").map { try c.text($0, path + ".description", self) },
            expectedFields: try strings(o.required("expectedFields"), path + ".expectedFields"),
            validationRules: rules ?? [],
            conditionalLogic: try o.optional("conditionalLogic").map {
                try readLogic($0, path + ".conditionalLogic", &c)
            } ?? .none)
    }

    func readLogic(_ value: JSONValue, _ path: String, _ c: inout Context) throws -> FormTemplate.ConditionalLogic {
        let o = try object(value, path, keys: ["showIf", "fields", "next"])
        var fields: [String: FormCondition] = [:]
        if let v = o.optional("fields") {
            guard let fo = v.objectValue else {
                throw fail(path + ".fields", "expected an object of field → condition")
            }
            for (key, cond) in fo { fields[key] = try c.condition(cond, "\(path).fields.\(key)", self) }
        }
        let next = try o.optional("next").map { v in
            try array(v, path + ".next").enumerated().map { i, item in
                let at = "\(path).next[\(i)]"
                let jo = try object(item, at, keys: ["when", "goto"])
                return FormTemplate.Jump(
                    when: try c.condition(jo.required("when"), at + ".when", self),
                    goto: try identifier(jo.required("goto"), at + ".goto"))
            }
        }
        return .init(
            showIf: try o.optional("showIf").map { try c.condition($0, path + ".showIf", self) }, fields: fields,
            next: next ?? [])
    }

    func readRule(_ value: JSONValue, _ path: String, _ c: inout Context) throws -> FormTemplate.StepRule {
        let o = try object(
            value, path,
            keys: [
                "rule", "field", "other", "min", "max", "from", "plusDays", "months", "unless", "lookup", "message",
                "severity",
            ])
        let name = try string(o.required("rule"), path + ".rule")
        let kind: FormTemplate.StepRule.Kind
        switch name {
        case "dateAfter":
            kind = .dateAfter(other: try identifier(o.required("other"), path + ".other"))
        case "dateBefore":
            kind = .dateBefore(other: try identifier(o.required("other"), path + ".other"))
        case "ageBetween":
            kind = .ageBetween(
                min: try o.optional("min").map { try amount($0, path + ".min") },
                max: try o.optional("max").map { try amount($0, path + ".max") })
        case "validUntil":
            let months = try o.optional("months").map { v -> Int in
                guard let n = v.intValue, (0...120).contains(n) else {
                    throw fail(path + ".months", "expected a whole number of months 0…120")
                }
                return n
            }
            kind = .validUntil(
                from: try identifier(o.required("from"), path + ".from"),
                plusDays: try o.optional("plusDays").map { try identifier($0, path + ".plusDays") },
                months: months ?? 0, exempt: try o.optional("unless").map { try readExemption($0, path + ".unless") })
        case "lookupPattern": kind = .lookupPattern(path: try string(o.required("lookup"), path + ".lookup"))
        case "lookupPrefixRanges": kind = .lookupPrefixRanges(path: try string(o.required("lookup"), path + ".lookup"))
        default:
            throw fail(
                path + ".rule",
                "unknown rule '\(name)'; rules: dateAfter, dateBefore, ageBetween, validUntil, lookupPattern, "
                    + "lookupPrefixRanges")
        }
        for key in ["other", "min", "max", "from", "plusDays", "months", "unless", "lookup"] where o.values[key] != nil
        {
            let allowed: Bool
            switch kind {
            case .dateAfter, .dateBefore: allowed = key == "other"
            case .ageBetween: allowed = key == "min" || key == "max"
            case .validUntil: allowed = ["from", "plusDays", "months", "unless"].contains(key)
            case .lookupPattern, .lookupPrefixRanges: allowed = key == "lookup"
            }
            if !allowed { throw fail("\(path).\(key)", "not a key of the '\(name)' rule") }
        }
        let severity = try o.optional("severity").map { try string($0, path + ".severity") } ?? "error"
        guard severity == "error" || severity == "warning" else {
            throw fail(path + ".severity", "expected \"error\" or \"warning\", found \"\(severity)\"")
        }
        return .init(
            kind: kind, field: try identifier(o.required("field"), path + ".field"),
            message: try c.text(o.required("message"), path + ".message", self), isWarning: severity == "warning")
    }

    /// `{"field": ID, "inList": "file.json"}`; the list file (beside the template) is
    /// `{"note"?, "source", "asOf", "codes": ["AND", …], "names"?}` with 3-letter codes.
    func readExemption(_ value: JSONValue, _ path: String) throws -> FormTemplate.Exemption {
        let o = try object(value, path, keys: ["field", "inList"])
        let name = try string(o.required("inList"), path + ".inList")
        guard !name.contains("/"), name.hasSuffix(".json") else {
            throw fail(path + ".inList", "expected a .json file name beside the template")
        }
        let root: JSONValue
        do { root = try StrictJSON().parse(try readFile(name)) } catch let e as FormError { throw e } catch {
            throw FormError.invalidTemplate(file: name, keyPath: "", problem: "\(error)")
        }
        func bad(_ key: String, _ problem: String) -> FormError {
            .invalidTemplate(file: name, keyPath: key, problem: problem)
        }
        guard let list = root.objectValue else { throw bad("", "expected an object") }
        for key in list.keys.sorted() where !["note", "source", "asOf", "codes", "names"].contains(key) {
            throw bad(key, "unknown key")
        }
        guard let source = list["source"]?.stringValue, !source.isEmpty, let asOf = list["asOf"]?.stringValue,
            !asOf.isEmpty
        else { throw bad("", "a code list needs 'source' and 'asOf' (where its facts come from, and when)") }
        guard let codes = list["codes"]?.arrayValue else { throw bad("codes", "expected an array of codes") }
        var set = Set<String>()
        for (i, c) in codes.enumerated() {
            guard let code = c.stringValue, code.count == 3, code.allSatisfy({ $0.isASCII && $0.isUppercase }) else {
                throw bad("codes[\(i)]", "expected a 3-letter upper-case code")
            }
            set.insert(code)
        }
        return .init(
            field: try identifier(o.required("field"), path + ".field"),
            list: .init(file: name, source: source, asOf: asOf, codes: set))
    }

    func amount(_ value: JSONValue, _ path: String) throws -> FormTemplate.Amount {
        if let n = value.doubleValue { return .value(n) }
        if let s = value.stringValue, !s.isEmpty { return .lookup(s) }
        throw fail(path, "expected a number or a key path into the lookup entry (\"fees.renewal\"), found \(value)")
    }

    func readReview(_ value: JSONValue, _ path: String, _ c: inout Context) throws -> FormTemplate.Review {
        let o = try object(value, path, keys: ["checklists", "submissionGuidance", "feeInfo", "reminders"])
        let checklists = try array(o.required("checklists"), path + ".checklists").enumerated().map { i, item in
            let at = "\(path).checklists[\(i)]"
            let co = try object(item, at, keys: ["id", "title", "when", "items"])
            return FormTemplate.Checklist(
                id: try identifier(co.required("id"), at + ".id"),
                title: try c.text(co.required("title"), at + ".title", self),
                when: try co.optional("when").map { try c.condition($0, at + ".when", self) },
                items: try array(co.required("items"), at + ".items").enumerated().map { k, entry in
                    let ip = "\(at).items[\(k)]"
                    let io = try object(entry, ip, keys: ["text", "fromLookup", "when"])
                    let when = try io.optional("when").map { try c.condition($0, ip + ".when", self) }
                    switch (io.optional("text"), io.optional("fromLookup")) {
                    case (let t?, nil): return .text(try c.text(t, ip + ".text", self), when: when)
                    case (nil, let l?): return .fromLookup(try string(l, ip + ".fromLookup"), when: when)
                    default: throw fail(ip, "give exactly one of \"text\" and \"fromLookup\"")
                    }
                })
        }
        let fee = try o.optional("feeInfo").map { v -> FormTemplate.FeeInfo in
            let at = path + ".feeInfo"
            let fo = try object(v, at, keys: ["currency", "items", "note"])
            return .init(
                currency: try string(fo.required("currency"), at + ".currency"),
                items: try array(fo.required("items"), at + ".items").enumerated().map { k, entry in
                    let ip = "\(at).items[\(k)]"
                    let io = try object(entry, ip, keys: ["id", "label", "amount", "when"])
                    return FormTemplate.FeeItem(
                        id: try identifier(io.required("id"), ip + ".id"),
                        label: try c.text(io.required("label"), ip + ".label", self),
                        amount: try amount(io.required("amount"), ip + ".amount"),
                        when: try io.optional("when").map { try c.condition($0, ip + ".when", self) })
                },
                note: try fo.optional("note").map { try c.text($0, at + ".note", self) })
        }
        let reminders = try o.optional("reminders").map { v in
            try array(v, path + ".reminders").enumerated().map { k, entry -> FormTemplate.Reminder in
                let at = "\(path).reminders[\(k)]"
                let ro = try object(entry, at, keys: ["fieldId", "title", "description", "alarmDaysBefore"])
                let days = ro.optional("alarmDaysBefore").map { $0.doubleValue ?? -1 } ?? 0
                guard days == days.rounded(), (0...365).contains(days)
                else { throw fail(at + ".alarmDaysBefore", "expected a whole number of days from 0 to 365") }
                return .init(
                    field: try identifier(ro.required("fieldId"), at + ".fieldId"),
                    title: try c.text(ro.required("title"), at + ".title", self),
                    description: try c.text(ro.required("description"), at + ".description", self),
                    alarmDaysBefore: Int(days))
            }
        }
        return .init(
            checklists: checklists,
            submissionGuidance: try c.text(o.required("submissionGuidance"), path + ".submissionGuidance", self),
            feeInfo: fee, reminders: reminders ?? [])
    }

    // MARK: Values

    /// An object whose keys are all in `keys`, with `path` for messages.
    struct Object {
        let values: [String: JSONValue]
        let path: String
        let reader: TemplateReader

        func required(_ key: String) throws -> JSONValue {
            guard let v = values[key], v != .null else {
                throw reader.fail(path.isEmpty ? key : "\(path).\(key)", "missing")
            }
            return v
        }

        func optional(_ key: String) -> JSONValue? {
            guard let v = values[key], v != .null else { return nil }
            return v
        }
    }

    func object(_ value: JSONValue, _ path: String, keys: [String]) throws -> Object {
        guard let o = value.objectValue else { throw fail(path, "expected an object, found \(value.kindName)") }
        for key in o.keys.sorted() where !keys.contains(key) {
            throw fail(path.isEmpty ? key : "\(path).\(key)", "unknown key; keys here: \(keys.joined(separator: ", "))")
        }
        return Object(values: o, path: path, reader: self)
    }

    func array(_ value: JSONValue, _ path: String) throws -> [JSONValue] {
        guard let a = value.arrayValue else { throw fail(path, "expected an array, found \(value.kindName)") }
        return a
    }

    func string(_ value: JSONValue, _ path: String) throws -> String {
        guard let s = value.stringValue else { throw fail(path, "expected a string, found \(value.kindName)") }
        return s
    }

    func strings(_ value: JSONValue, _ path: String) throws -> [String] {
        try array(value, path).enumerated().map { try string($0.element, "\(path)[\($0.offset)]") }
    }

    /// An id: letters, digits, `_` and `-`, starting with a letter.
    func identifier(_ value: JSONValue, _ path: String) throws -> String {
        let s = try string(value, path)
        guard let first = s.first, first.isASCII && first.isLetter,
            s.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        else { throw fail(path, "'\(s)' is not an id (ASCII letters, digits, _ and -, starting with a letter)") }
        return s
    }

    /// What is collected while reading and checked at the end: the languages every text needs, and the
    /// conditions (whose fields may be defined later in the file).
    struct Context {
        let languages: [String]
        var conditions: [(String, FormCondition)] = []

        init(languages: [String]) { self.languages = languages }

        /// A text with every supported language: `{"en": …, "ar": …, "es": …}`.
        mutating func text(_ value: JSONValue, _ path: String, _ r: TemplateReader) throws -> LocalizedText {
            let o = try r.object(value, path, keys: languages)
            var out: [String: String] = [:]
            for language in languages {
                let s = try r.string(o.required(language), "\(path).\(language)")
                guard !s.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                    throw r.fail("\(path).\(language)", "is empty")
                }
                out[language] = s
            }
            return LocalizedText(out)
        }

        /// A condition; its depth is bounded by the JSON reader's nesting limit.
        mutating func condition(_ value: JSONValue, _ path: String, _ r: TemplateReader) throws -> FormCondition {
            let c = try Self.parseCondition(value, path, r)
            conditions.append((path, c))
            return c
        }

        static func parseCondition(_ value: JSONValue, _ path: String, _ r: TemplateReader) throws -> FormCondition {
            let o = try r.object(
                value, path, keys: ["field", "equals", "notEquals", "in", "answered", "all", "any", "not"])
            let tests = ["equals", "notEquals", "in", "answered"].filter { o.values[$0] != nil }
            let groups = ["all", "any", "not"].filter { o.values[$0] != nil }
            if let field = o.optional("field") {
                let f = try r.identifier(field, path + ".field")
                guard tests.count == 1, groups.isEmpty else {
                    throw r.fail(path, "a field condition has exactly one of equals, notEquals, in, answered")
                }
                let v = try o.required(tests[0])
                let at = "\(path).\(tests[0])"
                switch tests[0] {
                case "equals": return .equals(field: f, value: try r.string(v, at))
                case "notEquals": return .notEquals(field: f, value: try r.string(v, at))
                case "in": return .oneOf(field: f, values: try r.strings(v, at))
                default:
                    guard let b = v.boolValue else { throw r.fail(at, "expected true or false, found \(v)") }
                    return .answered(field: f, b)
                }
            }
            guard groups.count == 1, tests.isEmpty else {
                throw r.fail(path, "a condition is {\"field\", test}, {\"all\": […]}, {\"any\": […]} or {\"not\": {…}}")
            }
            let v = try o.required(groups[0])
            let at = "\(path).\(groups[0])"
            switch groups[0] {
            case "not": return .not(try parseCondition(v, at, r))
            case "all":
                return .all(
                    try r.array(v, at).enumerated().map { try parseCondition($0.element, "\(at)[\($0.offset)]", r) })
            default:
                return .any(
                    try r.array(v, at).enumerated().map { try parseCondition($0.element, "\(at)[\($0.offset)]", r) })
            }
        }
    }
}
