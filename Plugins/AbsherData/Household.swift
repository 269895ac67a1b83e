import Foundation
import SanadChat
import SanadCore

/// A document held by someone the user looks after (a dependent's passport, a worker's iqama):
/// `{"id": "iq-7", "type": "iqama", "number": "2345678901", "expiryDate": "2026-12-04"}`.
public struct HeldDocument: Sendable, Equatable {
    static let keys = ["id", "type", "number", "expiryDate"]

    public var id: String
    /// One of `UserData.documentKinds`.
    public var kind: String
    public var number: String?
    public var expiryDate: CivilDate

    public init(id: String, kind: String, number: String? = nil, expiryDate: CivilDate) {
        self.id = id
        self.kind = kind
        self.number = number
        self.expiryDate = expiryDate
    }
}

/// Someone whose services the user handles: a dependent (from `dependents`) or a worker (from `workers`).
public struct HouseholdMember: Sendable, Equatable {
    public enum Role: String, Sendable { case dependent, worker }

    public var id: String
    public var role: Role
    public var name: String
    /// As addressed to the user: `بنتك`, `عاملتك المنزلية`; English in `english`.
    public var relationship: String
    public var isFemale: Bool
    public var documents: [HeldDocument]
    /// `name` and `relationship` in English (`{"name": "Ramesh", "relationship": "your driver"}`), when given.
    public var english: [String: String]

    public init(
        id: String, role: Role, name: String, relationship: String, isFemale: Bool = false,
        documents: [HeldDocument] = [], english: [String: String] = [:]
    ) {
        self.id = id
        self.role = role
        self.name = name
        self.relationship = relationship
        self.isFemale = isFemale
        self.documents = documents
        self.english = english
    }

    public func name(in language: ChatLanguage) -> String { language == .english ? english["name"] ?? name : name }
    public func relationship(in language: ChatLanguage) -> String {
        language == .english ? english["relationship"] ?? relationship : relationship
    }
}

/// One of the user's vehicles: `{"id": "v-1", "plate": "ABJ 1234", "make": "تويوتا كامري", "registrationExpiry":
/// "2027-01-15", "en": {"make": "Toyota Camry"}}`.
public struct Vehicle: Sendable, Equatable {
    static let keys = ["id", "plate", "make", "registrationExpiry", "en"]

    public var id: String
    public var plate: String
    public var make: String?
    public var englishMake: String?
    /// The registration's (istimara's) expiry.
    public var registrationExpiry: CivilDate

    public init(
        id: String, plate: String, make: String? = nil, englishMake: String? = nil, registrationExpiry: CivilDate
    ) {
        self.id = id
        self.plate = plate
        self.make = make
        self.englishMake = englishMake
        self.registrationExpiry = registrationExpiry
    }

    public func make(in language: ChatLanguage) -> String? { language == .english ? englishMake ?? make : make }
}

/// A traffic violation recorded against the user: `{"id": "tv-1", "vehicle": "v-1", "amountSAR": 300, "dueDate":
/// "2026-12-10", "paid": false, "kind": "تجاوز السرعة", "en": {"kind": "speeding"}}`.
public struct TrafficViolation: Sendable, Equatable {
    static let keys = ["id", "vehicle", "amountSAR", "dueDate", "paid", "kind", "en"]

    public var id: String
    /// The vehicle's id in `vehicles`, when the violation names one.
    public var vehicle: String?
    public var amountSAR: Int
    /// The last day to pay it.
    public var dueDate: CivilDate
    public var paid: Bool
    public var kind: String?
    public var englishKind: String?

    public init(
        id: String, vehicle: String? = nil, amountSAR: Int, dueDate: CivilDate, paid: Bool = false, kind: String? = nil,
        englishKind: String? = nil
    ) {
        self.id = id
        self.vehicle = vehicle
        self.amountSAR = amountSAR
        self.dueDate = dueDate
        self.paid = paid
        self.kind = kind
        self.englishKind = englishKind
    }
}

/// Reads one object of the user file strictly: every error names the file and the key path.
struct StrictObject {
    let object: [String: JSONValue]
    let path: String
    let fail: (String, String) -> PluginError

    init(_ value: JSONValue, path: String, keys: [String], fail: @escaping (String, String) -> PluginError) throws {
        guard case .object(let o) = value else { throw fail(path, "expected an object, found \(value.kindName)") }
        self.object = o
        self.path = path
        self.fail = fail
        for key in o.keys.sorted() where !keys.contains(key) {
            throw fail(at(key), "unknown key; valid keys here: \(keys.joined(separator: ", "))")
        }
    }

    /// `path.key` (`key` at the top).
    func at(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func string(_ key: String, required: Bool) throws -> String? {
        guard let v = object[key], v != .null else {
            if required { throw fail(at(key), "missing required key") }
            return nil
        }
        guard let s = v.stringValue, !s.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw fail(at(key), "expected a non-empty string, found \(v.kindName == "string" ? "\"\"" : v.kindName)")
        }
        return s
    }

    func date(_ key: String) throws -> CivilDate {
        let text = try string(key, required: true) ?? ""
        guard let date = CivilDate(iso: text) else {
            throw fail(at(key), "'\(text)' is not a date in the form YYYY-MM-DD")
        }
        return date
    }

    func riyals(_ key: String) throws -> Int {
        guard let v = object[key], v != .null else { throw fail(at(key), "missing required key") }
        guard let n = v.intValue, n >= 0 else {
            throw fail(at(key), "expected a whole number of riyals ≥ 0, found \(v)")
        }
        return n
    }

    func bool(_ key: String) throws -> Bool? {
        guard let v = object[key], v != .null else { return nil }
        guard let b = v.boolValue else { throw fail(at(key), "expected true or false, found \(v.kindName)") }
        return b
    }

    func array(_ key: String) throws -> [JSONValue] {
        guard let v = object[key], v != .null else { return [] }
        guard case .array(let a) = v else { throw fail(at(key), "expected an array, found \(v.kindName)") }
        return a
    }

    /// The `en` object's texts, each one of `keys`.
    func english(_ keys: [String]) throws -> [String: String] {
        guard let v = object["en"], v != .null else { return [:] }
        let en = try StrictObject(v, path: at("en"), keys: keys, fail: fail)
        var out: [String: String] = [:]
        for key in keys { out[key] = try en.string(key, required: false) }
        return out
    }
}

extension UserData {
    /// The kinds of document a service or a household member's document may name.
    public static let documentKinds = ["passport", "national_id", "driving_license", "iqama"]

    /// `documents` of a dependent or worker at `path`; ids must be unique across the file (`seen`).
    static func heldDocuments(
        _ entries: [JSONValue], path: String, seen: inout Set<String>, fail: @escaping (String, String) -> PluginError
    ) throws -> [HeldDocument] {
        try entries.enumerated().map { j, entry in
            let o = try StrictObject(entry, path: "\(path)[\(j)]", keys: HeldDocument.keys, fail: fail)
            let id = try o.string("id", required: true) ?? ""
            guard seen.insert(id).inserted else {
                throw fail("\(path)[\(j)].id", "'\(id)' is used by an earlier entry")
            }
            let kind = try o.string("type", required: true) ?? ""
            guard documentKinds.contains(kind) else {
                throw fail("\(path)[\(j)].type", "'\(kind)' is not one of: \(documentKinds.joined(separator: ", "))")
            }
            return HeldDocument(
                id: id, kind: kind, number: try o.string("number", required: false),
                expiryDate: try o.date("expiryDate"))
        }
    }

    /// The household: complete dependents (with their documents, read strictly) and every worker.
    static func household(
        dependents: [JSONValue], workers: [JSONValue], seen: inout Set<String>,
        fail: @escaping (String, String) -> PluginError
    ) throws -> [HouseholdMember] {
        var out: [HouseholdMember] = []
        for (i, entry) in dependents.enumerated() {
            guard case .object(let o) = entry else { continue }
            let docs = try heldDocuments(
                try StrictObject(
                    .object(o.filter { $0.key == "documents" }), path: "dependents[\(i)]",
                    keys: ["documents"], fail: fail
                ).array("documents"),
                path: "dependents[\(i)].documents", seen: &seen, fail: fail)
            // The dependents plugin reports incomplete entries; they are not household members to answer about.
            guard let name = o["name"]?.stringValue, !name.isEmpty, let rel = o["relationship"]?.stringValue else {
                continue
            }
            var english: [String: String] = [:]
            for (k, v) in o["en"]?.objectValue ?? [:] { english[k] = v.stringValue }
            out.append(
                HouseholdMember(
                    id: o["id"]?.stringValue ?? "dependent-\(i + 1)", role: .dependent, name: name, relationship: rel,
                    isFemale: o["gender"]?.stringValue == "female", documents: docs, english: english))
        }
        let workerKeys = ["id", "name", "relationship", "gender", "documents", "en"]
        for (i, entry) in workers.enumerated() {
            let path = "workers[\(i)]"
            let o = try StrictObject(entry, path: path, keys: workerKeys, fail: fail)
            let id = try o.string("id", required: true) ?? ""
            guard seen.insert(id).inserted else { throw fail("\(path).id", "'\(id)' is used by an earlier entry") }
            var female = false
            if let g = try o.string("gender", required: false) {
                guard ["female", "male"].contains(g) else {
                    throw fail("\(path).gender", "'\(g)' is not female or male")
                }
                female = g == "female"
            }
            out.append(
                HouseholdMember(
                    id: id, role: .worker, name: try o.string("name", required: true) ?? "",
                    relationship: try o.string("relationship", required: true) ?? "", isFemale: female,
                    documents: try heldDocuments(
                        try o.array("documents"), path: "\(path).documents", seen: &seen, fail: fail),
                    english: try o.english(["name", "relationship"])))
        }
        return out
    }

    static func vehicles(
        _ entries: [JSONValue], seen: inout Set<String>, fail: @escaping (String, String) -> PluginError
    )
        throws -> [Vehicle]
    {
        try entries.enumerated().map { i, entry in
            let o = try StrictObject(entry, path: "vehicles[\(i)]", keys: Vehicle.keys, fail: fail)
            let id = try o.string("id", required: true) ?? ""
            guard seen.insert(id).inserted else {
                throw fail("vehicles[\(i)].id", "'\(id)' is used by an earlier entry")
            }
            return Vehicle(
                id: id, plate: try o.string("plate", required: true) ?? "", make: try o.string("make", required: false),
                englishMake: try o.english(["make"])["make"], registrationExpiry: try o.date("registrationExpiry"))
        }
    }

    static func violations(
        _ entries: [JSONValue], vehicles: [Vehicle], seen: inout Set<String>,
        fail: @escaping (String, String) -> PluginError
    ) throws -> [TrafficViolation] {
        try entries.enumerated().map { i, entry in
            let path = "violations[\(i)]"
            let o = try StrictObject(entry, path: path, keys: TrafficViolation.keys, fail: fail)
            let id = try o.string("id", required: true) ?? ""
            guard seen.insert(id).inserted else { throw fail("\(path).id", "'\(id)' is used by an earlier entry") }
            let vehicle = try o.string("vehicle", required: false)
            if let vehicle, !vehicles.contains(where: { $0.id == vehicle }) {
                throw fail(
                    "\(path).vehicle",
                    "'\(vehicle)' is not the id of a vehicle in 'vehicles' (\(vehicles.map(\.id).joined(separator: ", ")))"
                )
            }
            return TrafficViolation(
                id: id, vehicle: vehicle, amountSAR: try o.riyals("amountSAR"), dueDate: try o.date("dueDate"),
                paid: try o.bool("paid") ?? false, kind: try o.string("kind", required: false),
                englishKind: try o.english(["kind"])["kind"])
        }
    }
}

/// `ولدك` → `ولد`, `بنتك` → `بنت`, `سائقك` → `سائق`: a relationship as said to the person, without the second-person
/// suffix (its first word), so `ولدي` matches it as `ولد*`.
public func relationshipStem(_ relationship: String) -> String {
    let first = String(relationship.split(separator: " ").first ?? "")
    let trimmed = first.hasSuffix("ك") ? String(first.dropLast()) : first
    return trimmed.count >= 2 ? trimmed : first
}

/// `text` with its first letter in upper case (`your son` → `Your son`).
public func capitalized(_ text: String) -> String {
    text.prefix(1).uppercased() + text.dropFirst()
}
