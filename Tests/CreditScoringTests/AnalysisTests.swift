import CreditScoringPlugin
import Foundation
import Testing

@Suite("credit feature pass")
struct AnalysisTests {
    @Test func promisesLovedOnesAndExplanations() throws {
        let url = try CreditFixtures.file(CreditFixtures.plain)
        let r = try CreditAnalysis.run(path: url.path, settings: AnalysisSettings())
        #expect(r.counts["promisesMade"] == 3)
        #expect(r.counts["promisesKept"] == 1)
        #expect(r.counts["promisesBroken"] == 2)
        let kept = r.explanations.first { $0.feature == "promisesKept" }
        #expect(kept?.messageIds == ["L5"])
        #expect(r.explanations.first { $0.feature == "promisesBroken" }?.messageIds == ["L8", "L13"])
        let mom = r.lovedOnes.first { $0.contact == "Mom" }
        #expect(mom?.label == "mother")
        #expect(mom?.explanation.hasPrefix("mother (named): kinship term ×") == true)
        #expect(mom?.signal == "named" && mom?.confidence == "high")
        #expect(!r.lovedOnes.contains { $0.contact == "Sam" })
        for value in [
            r.traits.openness, r.traits.conscientiousness, r.traits.extraversion, r.traits.agreeableness,
            r.traits.neuroticism,
        ] {
            #expect((0...1).contains(value))
        }
        #expect((0...100).contains(r.trustworthiness))
        #expect(r.prioritised.first == "L12")
    }

    @Test("a relationship is the contact's name or how I address them; 'bro' and 'يا أخي' to a friend name none")
    func relationshipsWithEvidence() throws {
        // Plain lines: my message belongs to the conversation of the message before it.
        var lines: [String] = []
        for day in 1...9 {
            let d = String(format: "2024-03-%02dT10:00", day)
            // A friend called bro and يا أخي every day: close by pattern, never a brother.
            lines += [
                "\(d) | Sam | yes habibi see you", "\(d) | me | bro you coming tonight?", "\(d) | me | يا أخي وينك",
            ]
            // Layla, addressed as Mom twice: a mother by address, with the messages as evidence.
            if day <= 2 { lines += ["\(d) | Layla | love you dear", "\(d) | me | Mom, I love you"] }
            // A contact whose name says it.
            if day <= 4 { lines += ["\(d) | أمي | الله يحفظك يا حبيبي", "\(d) | me | الله يخليك"] }
            // My brother mentioned to someone else is not about the person written to.
            if day <= 3 { lines += ["\(d) | Nora | say hi back dear", "\(d) | me | my brother Ali says hi habibi"] }
        }
        let r = try CreditAnalysis.run(
            path: try CreditFixtures.file(lines.joined(separator: "\n")).path, settings: AnalysisSettings())
        let sam = try #require(r.lovedOnes.first { $0.contact == "Sam" })
        #expect(sam.label == "close contact" && sam.signal == "pattern" && sam.confidence == "low", "\(sam)")
        let layla = try #require(r.lovedOnes.first { $0.contact == "Layla" })
        #expect(layla.label == "mother" && layla.signal == "addressed" && layla.confidence == "medium", "\(layla)")
        #expect(layla.messageIDs.count == 2 && layla.explanation.hasPrefix("mother (addressed ×2)"), "\(layla)")
        let named = try #require(r.lovedOnes.first { $0.contact == "أمي" })
        #expect(named.label == "mother" && named.signal == "named", "\(named)")
        #expect(!r.lovedOnes.contains { $0.label == "brother" }, "\(r.lovedOnes)")
        // What the person states wins: Sam is a brother after all, Nora (not close by the rules) a cousin.
        var settings = AnalysisSettings()
        settings.contacts = ["Sam": "brother", "Zed": "cousin"]
        let stated = try CreditAnalysis.run(
            path: try CreditFixtures.file(lines.joined(separator: "\n")).path, settings: settings)
        let brother = try #require(stated.lovedOnes.first { $0.contact == "Sam" })
        #expect(brother.label == "brother" && brother.signal == "stated" && brother.confidence == "high")
    }

    @Test func explanationsNeverQuoteText() throws {
        let url = try CreditFixtures.file(CreditFixtures.plain)
        let r = try CreditAnalysis.run(path: url.path, settings: AnalysisSettings())
        // Any three consecutive words of any message.
        var phrases: [String] = []
        for line in CreditFixtures.plain.split(separator: "\n") {
            let words = (line.split(separator: "|").last ?? "").split(separator: " ")
            for i in 0..<max(0, words.count - 2) { phrases.append(words[i...(i + 2)].joined(separator: " ")) }
        }
        let said =
            (r.explanations.map { "\($0.feature) \($0.effect) \($0.messageIds)" } + r.lovedOnes.map(\.explanation))
            .joined(separator: " ")
        #expect(phrases.count > 20)
        for p in phrases { #expect(!said.contains(p), "\(p)") }
    }

    @Test func sameInputSameResultAnyThreads() throws {
        var text = ""
        for i in 0..<3000 {
            let who = ["Mom", "Sam", "Lina", "me"][i % 4]
            text += "2024-0\(1 + i % 9)-1\(i % 10)T10:\(10 + i % 50) | \(who) | msg \(i) loan rent habibi sorry idea\n"
        }
        let url = try CreditFixtures.file(text)
        let one = try CreditAnalysis.run(path: url.path, settings: AnalysisSettings(threads: 1))
        let two = try CreditAnalysis.run(path: url.path, settings: AnalysisSettings(threads: 2))
        #expect(one.traits == two.traits && one.trustworthiness == two.trustworthiness)
        #expect(one.explanations == two.explanations && one.lovedOnes == two.lovedOnes && one.counts == two.counts)
        let loved = try CreditAnalysis.run(path: url.path, settings: AnalysisSettings(scope: .lovedOnes))
        #expect(loved.counts["contacts"] == loved.lovedOnes.count)
    }

    @Test func cancellationLeavesNoResult() throws {
        var text = ""
        for i in 0..<20000 { text += "2024-01-01T10:00 | Sam | message \(i)\n" }
        let url = try CreditFixtures.file(text)
        #expect(throws: CreditError.cancelled) {
            try CreditAnalysis.run(path: url.path, settings: AnalysisSettings()) { _ in false }
        }
    }

    @Test("a pass cancelled after a checkpoint and resumed from it gives the uninterrupted result and input digest")
    func checkpointResume() throws {
        var text = ""
        for i in 0..<30000 {
            let day = String(format: "%02d", 1 + i % 28)
            text +=
                i % 3 == 0
                ? "2024-01-\(day)T10:00 | me | I will pay you back the loan \(i)\n"
                : "2024-01-\(day)T11:00 | Sam | thanks habibi, paid \(i)\n"
        }
        let url = try CreditFixtures.file(text)
        let lib = try LibCrypto.shared()
        let wholeDigest = try SHA256Digest(lib)
        let whole = try CreditAnalysis.run(path: url.path, settings: AnalysisSettings(), digest: wholeDigest)
        var saved: AnalysisCheckpoint?
        #expect(throws: CreditError.cancelled) {
            try CreditAnalysis.run(
                path: url.path, settings: AnalysisSettings(), checkpoint: CheckpointSink { saved = $0 }
            ) { done in done < 16384 }
        }
        let checkpoint = try #require(saved)
        #expect(checkpoint.messagesDone == 16384)
        // No message text at rest: the saved fold holds counters, ids and line numbers only.
        let stored = String(decoding: checkpoint.fold, as: UTF8.self)
        #expect(!stored.contains("pay you back") && !stored.contains("habibi"), "\(stored.prefix(400))")
        let resumedDigest = try SHA256Digest(lib)
        let resumed = try CreditAnalysis.run(
            path: url.path, settings: AnalysisSettings(), digest: resumedDigest, resumeFrom: checkpoint)
        #expect(resumed.trustworthiness == whole.trustworthiness && resumed.traits == whole.traits)
        #expect(resumed.counts == whole.counts && resumed.explanations == whole.explanations)
        #expect(resumed.prioritised == whole.prioritised && resumed.input == whole.input)
        #expect(resumed.prioritisedTexts == whole.prioritisedTexts && !whole.prioritisedTexts.isEmpty)
        #expect(try resumedDigest.hex() == (try wholeDigest.hex()))
        var truncated = checkpoint
        truncated.messagesDone = 40000
        #expect(throws: CreditError.self) {
            try CreditAnalysis.run(path: url.path, settings: AnalysisSettings(), resumeFrom: truncated)
        }
    }
}

@Suite("credit: the large-input offer's decision")
struct LargeInputOfferTests {
    @Test("asked only for a large file on a terminal without --scope, --background or a job; answers read")
    func decision() {
        func offer(
            path: String = "m.txt", size: Int = 100, interactive: Bool = true, scope: Bool = false,
            background: Bool = false, job: Bool = false
        ) -> Bool {
            LargeInputOffer.shouldOffer(
                path: path, sizeBytes: size, thresholdBytes: 100, interactive: interactive, scopeGiven: scope,
                backgroundGiven: background, isJob: job)
        }
        #expect(offer())
        #expect(!offer(path: "-") && !offer(size: 99) && !offer(interactive: false))
        #expect(!offer(scope: true) && !offer(background: true) && !offer(job: true))
        #expect(LargeInputOffer.choice("") == .all && LargeInputOffer.choice(" A ") == .all)
        #expect(LargeInputOffer.choice("l") == .lovedOnes && LargeInputOffer.choice("loved-ones") == .lovedOnes)
        #expect(LargeInputOffer.choice("B") == .background && LargeInputOffer.choice("maybe") == nil)
        #expect(LargeInputOffer.defaultThresholdBytes == 16 << 20)
    }
}
