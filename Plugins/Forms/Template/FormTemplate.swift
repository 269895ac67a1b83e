import SanadCore

/// A conversational form as data: what to ask (`schema`), in which order and when (`conversationFlow`), and what the
/// person gets at the end (`review`). Read with `TemplateReader`, which checks every reference; the key names are
/// those of the specification (see `Resources/Templates/README.md`).
public struct FormTemplate: Sendable {
    public var metadata: Metadata
    public var sections: [Section]
    public var steps: [Step]
    public var review: Review
    /// The file it was read from (for messages).
    public var file: String

    public struct Metadata: Sendable {
        public var id: String
        public var name: LocalizedText
        public var version: String
        public var languageSupport: [String]
        /// A table of per-key facts (the DMV's per-state rules), picked by the answer to `keyField`.
        public var lookup: Lookup?
    }

    /// `metadata.lookup`: `{"file": "dmvStates.json", "keyField": "state"}`; the file's `entries` object maps each
    /// key (`CA`) to an object of facts that fees, checklists and rules name by key path (`fees.renewal`).
    public struct Lookup: Sendable {
        public var file: String
        public var keyField: String
        public var entries: [String: JSONValue]
        /// What each fact is, by its path, per language (the file's `factLabels`): how the review names a fact the
        /// entry marks `"unknown"`.
        public var factLabels: [String: [String: String]] = [:]

        /// The facts the entry for `key` marks `"unknown"` that `factLabels` names, in `factLabels`' path order.
        public func unknownFacts(key: String?) -> [String] {
            factLabels.keys.sorted().filter { isUnknown($0, key: key) }
        }

        /// True when the entry for `key` says the fact at `path` is not known (the string `"unknown"`: nobody could
        /// source it), as opposed to absent (the state has no such thing).
        public func isUnknown(_ path: String, key: String?) -> Bool { value(path, key: key)?.stringValue == "unknown" }

        /// The value at `path` (`fees.realId`) in the entry for `key`, or nil.
        public func value(_ path: String, key: String?) -> JSONValue? {
            guard let key, var value = entries[key] else { return nil }
            for part in path.split(separator: ".") {
                guard let next = value[String(part)] else { return nil }
                value = next
            }
            return value
        }
    }

    public struct Section: Sendable {
        public var id: String
        public var title: LocalizedText
        public var description: LocalizedText?
        public var fields: [Field]
    }

    public struct Field: Sendable {
        public var id: String
        public var label: LocalizedText
        public var type: FieldType
        public var required: Bool
        public var options: [Option]
        public var validation: FieldValidation
        public var aiPrompt: LocalizedText

        public init(
            id: String, label: LocalizedText, type: FieldType, required: Bool, options: [Option],
            validation: FieldValidation, aiPrompt: LocalizedText
        ) {
            self.id = id
            self.label = label
            self.type = type
            self.required = required
            self.options = options
            self.validation = validation
            self.aiPrompt = aiPrompt
        }
    }

    public struct Option: Sendable, Equatable {
        public var value: String
        public var label: LocalizedText

        public init(value: String, label: LocalizedText) {
            self.value = value
            self.label = label
        }
    }

    public struct Step: Sendable {
        public var id: String
        public var title: LocalizedText
        public var description: LocalizedText?
        public var expectedFields: [String]
        public var validationRules: [StepRule]
        public var conditionalLogic: ConditionalLogic
    }

    /// `conditionalLogic` of a step.
    public struct ConditionalLogic: Sendable {
        /// The step is part of the flow only when this holds (nil: always).
        public var showIf: FormCondition?
        /// A field of `expectedFields` is asked only when its condition holds.
        public var fields: [String: FormCondition]
        /// After this step, the first jump whose condition holds goes to its (later) step; else the next step.
        public var next: [Jump]

        public static let none = ConditionalLogic(showIf: nil, fields: [:], next: [])
    }

    public struct Jump: Sendable {
        public var when: FormCondition
        public var goto: String
    }

    /// A number written in the template, or a key path into the lookup entry (`"fees.renewal"`).
    public enum Amount: Sendable, Equatable {
        case value(Double)
        case lookup(String)
    }

    /// One entry of a step's `validationRules`: a check across answers, made when the step's fields are all answered.
    public struct StepRule: Sendable {
        public enum Kind: Sendable {
            /// `field` (a date) must be later than `other` (a date).
            case dateAfter(other: String)
            /// `field` (a date) must be earlier than `other` (a date).
            case dateBefore(other: String)
            /// The age from `field` (a birth date) to today is within `min…max` years.
            case ageBetween(min: Amount?, max: Amount?)
            /// `field` (a date) is on or after `from` (a date) plus the days answered in `plusDays` and `months`
            /// calendar months, unless `exempt` holds.
            case validUntil(from: String, plusDays: String?, months: Int, exempt: Exemption?)
            /// `field` matches, whole, the regular expression at `path` in the lookup entry (no check when the
            /// entry has none or it is `"unknown"`).
            case lookupPattern(path: String)
            /// The number in `field`'s first three digits is in one of the ranges at `path` in the lookup entry
            /// (`["900-961"]`: ZIP code prefixes; no check when the entry has none or they are `"unknown"`).
            case lookupPrefixRanges(path: String)
        }
        public var kind: Kind
        public var field: String
        public var message: LocalizedText
        /// `error` reopens `field`; `warning` is only shown in the review.
        public var isWarning: Bool
    }

    /// A rule does not apply when the answer to `field` is one of `list`'s codes.
    public struct Exemption: Sendable {
        public var field: String
        public var list: CodeList
    }

    /// A list of codes with where it comes from (`sixMonthClub.json`): `{"source", "asOf", "codes": [...]}`.
    public struct CodeList: Sendable {
        public var file: String
        public var source: String
        public var asOf: String
        public var codes: Set<String>
    }

    public struct Review: Sendable {
        public var checklists: [Checklist]
        public var submissionGuidance: LocalizedText
        public var feeInfo: FeeInfo?
        public var reminders: [Reminder] = []
    }

    /// A calendar reminder (an `.ics` file in the exports) for the date a `date` field holds, when it is answered.
    public struct Reminder: Sendable {
        public var field: String
        public var title: LocalizedText
        public var description: LocalizedText
        /// 0...365: the alarm fires this many days before the day.
        public var alarmDaysBefore: Int
    }

    public struct Checklist: Sendable {
        public var id: String
        public var title: LocalizedText
        public var when: FormCondition?
        public var items: [ChecklistItem]
    }

    /// A line of a checklist, or (`fromLookup`) every string of a list in the lookup entry.
    public enum ChecklistItem: Sendable {
        case text(LocalizedText, when: FormCondition?)
        case fromLookup(String, when: FormCondition?)
    }

    public struct FeeInfo: Sendable {
        public var currency: String
        public var items: [FeeItem]
        public var note: LocalizedText?
    }

    public struct FeeItem: Sendable {
        public var id: String
        public var label: LocalizedText
        public var amount: Amount
        public var when: FormCondition?
    }

    /// Every field by id.
    public var fields: [String: Field] {
        Dictionary(sections.flatMap(\.fields).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The field with `id`, or nil.
    public func field(_ id: String) -> Field? { sections.lazy.flatMap(\.fields).first { $0.id == id } }
}
