import Foundation
import SanadSigning

/// Which messages the analysis uses: all of them, or only those with loved ones.
public enum AnalysisScope: String, Sendable, CaseIterable {
    case all
    case lovedOnes = "loved-ones"
}

/// Everything that decides a result besides the input (recorded in the signed record).
public struct AnalysisSettings: Sendable, Equatable {
    public var scope: AnalysisScope
    public var reader: ReaderSettings
    /// Threads for the per-message pass (the result does not depend on it).
    public var threads: Int
    /// Relationships the person states (`--contacts FILE`: a contact's name or number → `mother`, `brother`, …):
    /// they override the guess and make the contact a loved one.
    public var contacts: [String: String] = [:]
    /// The person's consent, recorded in the record (`consent`); nil records `null`.
    public var consent: Consent?

    public init(scope: AnalysisScope = .all, reader: ReaderSettings = ReaderSettings(), threads: Int = 2) {
        self.scope = scope
        self.reader = reader
        self.threads = max(1, threads)
    }
}

/// A running digest of the canonical input messages (SHA-256 through libcrypto in the CLI).
public protocol InputDigest: AnyObject {
    func update(_ bytes: [UInt8]) throws
}

/// A contact's share of the input, for the record (pseudonym only) and local display (name).
public struct ContactSummary: Sendable, Equatable {
    public var name: String
    public var pseudonym: String
    public var messages: Int
    public var fromMe: Int
}

/// The result of the deterministic feature pass.
public struct AnalysisResult: Sendable {
    public var method = TraitModel.method
    public var input: ReadSummary
    public var settings: AnalysisSettings
    public var traits: BigFive
    public var trustworthiness: Int
    public var explanations: [Explanation]
    public var lovedOnes: [LovedOne]
    public var contacts: [ContactSummary]
    /// Message ids with financial or emotional content first (what the model pass reads).
    public var prioritised: [String]
    /// The texts of `prioritised`, in the same order: for the model pass on the device only, never written to the
    /// record.
    public var prioritisedTexts: [String] = []
    /// Feature counts over the messages in scope.
    public var counts: [String: Int]
}

/// The deterministic pass: reads messages in batches, computes per-message features on `threads` threads, folds
/// them into per-contact sums in input order, then evaluates traits for the scope. Same input and settings → same
/// result, whatever the thread count.
public enum CreditAnalysis {
    static let batchSize = 8192
    static let prioritisedLimit = 20

    /// `progress(messagesSoFar)` is called after every batch; returning false cancels (nothing is returned).
    /// `checkpoint` gets the state after batches (at most once a second, and before a cancel): counters, ids and
    /// line numbers, no message text. `resumeFrom` takes one back: its first `messagesDone` messages are read again
    /// for the input digest and the texts of the prioritised messages among them, their features come from the
    /// saved fold. The result equals an uninterrupted run's.
    public static func run(
        path: String, settings: AnalysisSettings, digest: (any InputDigest)? = nil,
        resumeFrom: AnalysisCheckpoint? = nil, checkpoint: CheckpointSink? = nil,
        progress: (Int) -> Bool = { _ in true }
    ) throws -> AnalysisResult {
        var state = FoldState()
        let skip = resumeFrom?.messagesDone ?? 0
        if let resumeFrom {
            do {
                state = try JSONDecoder().decode(FoldState.self, from: resumeFrom.fold)
            } catch {
                throw CreditError.io("the job's checkpoint cannot be read (\(error)); run the analysis again")
            }
        }
        // The prioritised messages folded before the checkpoint, whose texts the checkpoint does not hold.
        var textless = state.textlessPrioritised()
        var batch: [Message] = []
        batch.reserveCapacity(batchSize)
        var seen = 0
        var lastCheckpoint = Date()
        func save() {
            guard let checkpoint, let fold = try? JSONEncoder().encode(state) else { return }
            checkpoint.save(AnalysisCheckpoint(messagesDone: seen, fold: fold))
            lastCheckpoint = Date()
        }
        func flush() throws {
            let (features, canonical) = compute(batch, threads: settings.threads, canonical: digest != nil)
            for (i, message) in batch.enumerated() {
                state.add(message, features[i])
                if let digest { try digest.update(canonical[i]) }
            }
            seen += batch.count
            batch.removeAll(keepingCapacity: true)
            let go = progress(seen)
            if checkpoint != nil, !go || Date().timeIntervalSince(lastCheckpoint) >= 1 { save() }
            guard go else { throw CreditError.cancelled }
        }
        let summary = try MessageReader.read(path: path, settings: settings.reader) { message in
            if seen < skip {
                // Already folded before the checkpoint: the input digest needs it again, and a prioritised one's text.
                if let digest { try digest.update(CanonicalMessage.bytes(message)) }
                if let at = textless.removeValue(forKey: message.id) {
                    state.priority[at.contact]?[at.index].text = message.text
                }
                seen += 1
                if seen % batchSize == 0 || seen == skip { guard progress(seen) else { throw CreditError.cancelled } }
                return
            }
            batch.append(message)
            if batch.count == batchSize { try flush() }
        }
        guard seen >= skip else {
            throw CreditError.io(
                "the input has fewer messages (\(seen)) than the job's checkpoint (\(skip)); it changed")
        }
        if !batch.isEmpty { try flush() }
        return state.result(summary: summary, settings: settings)
    }

    /// Features (and canonical bytes) of a batch, split over `threads` threads.
    static func compute(_ batch: [Message], threads: Int, canonical: Bool) -> ([MessageFeatures], [[UInt8]]) {
        let parts = min(threads, max(1, batch.count / 256))
        let results = PartResults(parts)
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            var scanner = WordScanner()
            let range = (batch.count * part / parts)..<(batch.count * (part + 1) / parts)
            var features: [MessageFeatures] = []
            var bytes: [[UInt8]] = []
            features.reserveCapacity(range.count)
            for i in range {
                features.append(MessageFeatures.of(batch[i].text, scanner: &scanner))
                if canonical { bytes.append(CanonicalMessage.bytes(batch[i])) }
            }
            results.set(part, features, bytes)
        }
        return results.joined()
    }
}

/// The parts' results of one batch, filled from the worker threads.
final class PartResults: @unchecked Sendable {  // every access holds `lock`
    private let lock = NSLock()
    private var features: [[MessageFeatures]]
    private var bytes: [[[UInt8]]]

    init(_ parts: Int) {
        features = Array(repeating: [], count: parts)
        bytes = Array(repeating: [], count: parts)
    }

    func set(_ part: Int, _ f: [MessageFeatures], _ b: [[UInt8]]) {
        lock.lock()
        defer { lock.unlock() }
        features[part] = f
        bytes[part] = b
    }

    func joined() -> ([MessageFeatures], [[UInt8]]) {
        lock.lock()
        defer { lock.unlock() }
        return (features.flatMap { $0 }, bytes.flatMap { $0 })
    }
}

/// The per-contact sums while reading, in input order.
/// A message the model pass may read: its priority score, where it is, and its text (in memory only: a checkpoint
/// stores the score and the message's line and id, never the text; a resumed pass reads the text again).
struct Prioritised: Sendable, Codable {
    var score: Int
    var example: Example
    var text: String

    init(score: Int, example: Example, text: String) {
        self.score = score
        self.example = example
        self.text = text
    }

    enum CodingKeys: String, CodingKey { case score, example }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        score = try c.decode(Int.self, forKey: .score)
        example = try c.decode(Example.self, forKey: .example)
        text = ""
    }
}

/// Where an interrupted pass stands: how many messages were folded and the fold so far (JSON), for a background job
/// to continue from (`CreditAnalysis.run(resumeFrom:)`).
public struct AnalysisCheckpoint: Sendable, Codable, Equatable {
    public var messagesDone: Int
    public var fold: Data
}

/// Where checkpoints go (a type of its own, so that a trailing closure of `run` is always its `progress`).
public struct CheckpointSink {
    public let save: (AnalysisCheckpoint) -> Void
    public init(_ save: @escaping (AnalysisCheckpoint) -> Void) { self.save = save }
}

struct FoldState: Codable {
    var contacts: [String: ContactStats] = [:]
    var priority: [String: [Prioritised]] = [:]
    var lastDate = Int64.min

    /// Where each prioritised message without its text is (a checkpoint's), by message id.
    func textlessPrioritised() -> [String: (contact: String, index: Int)] {
        var out: [String: (contact: String, index: Int)] = [:]
        for (contact, list) in priority {
            for (i, p) in list.enumerated() where p.text.isEmpty { out[p.example.id] = (contact, i) }
        }
        return out
    }

    mutating func add(_ message: Message, _ f: MessageFeatures) {
        contacts[message.contact, default: ContactStats()].add(message, f)
        lastDate = max(lastDate, message.date)
        let money = 2 * f.count(.financial) + f.count(.promise) + f.count(.settled) + f.count(.unsettled)
        let feeling = f.count(.negative) + f.count(.positive) + f.count(.endearment)
        let score = money + feeling
        guard score > 0 else { return }
        var list = priority[message.contact, default: []]
        if list.count < CreditAnalysis.prioritisedLimit || score > (list.last?.score ?? 0) {
            let at = list.firstIndex { $0.score < score } ?? list.count
            list.insert(
                Prioritised(score: score, example: Example(line: message.line, id: message.id), text: message.text),
                at: at)
            if list.count > CreditAnalysis.prioritisedLimit { list.removeLast() }
        }
        priority[message.contact] = list
    }

    func result(summary: ReadSummary, settings: AnalysisSettings) -> AnalysisResult {
        var finished = contacts
        for key in finished.keys { finished[key]?.finish(lastInputDate: lastDate) }
        let ordered = finished.sorted { a, b in
            a.value.total != b.value.total ? a.value.total > b.value.total : a.key < b.key
        }
        var named: [(name: String, pseudonym: String, stats: ContactStats)] = []
        for (i, entry) in ordered.enumerated() { named.append((entry.key, "c\(i + 1)", entry.value)) }
        let total = named.reduce(0) { $0 + $1.stats.total }
        let loved = LovedOnesRule.choose(named, totalMessages: total, stated: settings.contacts)
        let lovedNames = Set(loved.map(\.contact))
        let scope = settings.scope == .all ? named : named.filter { lovedNames.contains($0.name) }
        let stats = ContactStats.sum(scope.map(\.stats))
        let (traits, score, explanations) = TraitModel.evaluate(.init(stats: stats, contactsInScope: scope.count))
        var candidates: [Prioritised] = []
        for contact in scope { candidates += priority[contact.name] ?? [] }
        candidates.sort { a, b in a.score != b.score ? a.score > b.score : a.example.line < b.example.line }
        let top = candidates.prefix(CreditAnalysis.prioritisedLimit)
        let prioritised: [String] = top.map { $0.example.id }
        var counts: [String: Int] = [:]
        counts["messages"] = stats.total
        counts["fromMe"] = stats.fromMe
        counts["contacts"] = scope.count
        counts["myWords"] = stats.myWords
        counts["promisesMade"] = stats.promisesMade
        counts["promisesKept"] = stats.promisesKept
        counts["promisesBroken"] = stats.promisesBroken
        counts["activeDays"] = stats.days.count
        counts["lovedOnes"] = loved.count
        counts["inputMessages"] = summary.messages
        counts["skippedLines"] = summary.skipped
        counts["notices"] = summary.notices
        for (name, category) in WordCategory.named {
            counts[name + "Words"] = stats.myCounts[category.rawValue.trailingZeroBitCount]
        }
        return AnalysisResult(
            input: summary, settings: settings, traits: traits, trustworthiness: score, explanations: explanations,
            lovedOnes: loved,
            contacts: named.map {
                ContactSummary(
                    name: $0.name, pseudonym: $0.pseudonym, messages: $0.stats.total, fromMe: $0.stats.fromMe)
            },
            prioritised: prioritised, prioritisedTexts: top.map(\.text), counts: counts)
    }
}

/// The canonical form of one message for the input hash: its JCS object
/// `{"chat","date","id","isFromMe","sender","text"}` (date as `YYYY-MM-DDTHH:MM:SSZ`) and a newline.
public enum CanonicalMessage {
    public static func bytes(_ m: Message) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(m.text.utf8.count + m.sender.utf8.count + m.chat.utf8.count + 96)
        out += Array("{\"chat\":".utf8)
        CanonicalJSON.writeString(m.chat, into: &out)
        out += Array(",\"date\":".utf8)
        CanonicalJSON.writeString(CivilTime.isoString(m.date), into: &out)
        out += Array(",\"id\":".utf8)
        CanonicalJSON.writeString(m.id, into: &out)
        out += Array((m.isFromMe ? ",\"isFromMe\":true,\"sender\":" : ",\"isFromMe\":false,\"sender\":").utf8)
        CanonicalJSON.writeString(m.sender, into: &out)
        out += Array(",\"text\":".utf8)
        CanonicalJSON.writeString(m.text, into: &out)
        out += [UInt8(ascii: "}"), 10]
        return out
    }
}
