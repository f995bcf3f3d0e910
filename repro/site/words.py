"""The site's own words in both languages: status badges, table headings, banners."""
from __future__ import annotations

from ..text import Text
from ..verdict_words import KIND, STATUS  # noqa: F401 (the site's words, with the verdicts')
WORDS = {
    "finding": Text("知見", "Finding"),
    "claim": Text("内容", "Claim"),
    "original": Text("原典", "Original"),
    "measured": Text("測定値 [95% 信頼区間] と判定条件", "Measured [95 % interval], and when it holds"),
    "condition": Text("条件", "holds if"),
    "status": Text("判定", "Verdict"),
    "pooled": Text("プールした実行", "Runs pooled"),
    "size": Text("原典と比べた大きさ", "Size vs the original"),
    "sizes_head": Text("効果の大きさは原典と同じか", "Is the effect as large as the original's?"),
    "sizes_count": Text("{major} で原典と大きさを比べられる原典の主張 {n} 件のうち、{same} 件が原典と同じ大きさです "
                        "(比べられない主張 {apart} 件、大きさの登録の後の実行がまだない主張 {waiting} 件)。",
                        "On {major}, {same} of the {n} claims of the original whose size compares with the "
                        "original's are the same size ({apart} do not compare; {waiting} have no run since their "
                        "size was registered)."),
    "sizes_largest": Text("大きさがいちばん変わった主張:", "The largest changes of size:"),
    "pooled_cell": Text("{k} 回の実行 ({r} ラウンド)", "{k} runs ({r} rounds)"),
    # a pooled estimate, where a page shows it (a table's cell, a number in the text)
    "pooled_number": Text("{k} 回の実行をプール", "{k} runs pooled"),
    "pooled_runs": Text("プールした実行", "pooled runs"),  # a chart's series, a column of pooled estimates
    "alone": Text("この実行だけ (現在の実験の実行ではありません)", "this run alone (not a run of the current experiment)"),
    "before_revision": Text("主張の改訂より前 (数えない)", "before the claim's revision (not counted)"),
    "machine_bound": Text("この章の判定は、CPU が {model} のマシンでの実行だけをプールしています。",
                          "This chapter's verdicts pool only the runs on machines with the CPU {model}. "),
    "machine_spread": Text("保存された実行では、CPU の型が違う実行どうしが、実行自身の標準誤差を単位として {parts} ほど違い、"
                           "区間が実行どうしの違いとして見込む {floor} を超えます (`python -m repro noise`)。",
                           " In the stored runs, runs on different CPU models differ, in units of a run's own "
                           "standard error, by {parts}: more than the {floor} that the intervals allow runs to "
                           "differ by (`python -m repro noise`)."),
    "left_out": Text("判定から外した結果ファイル {n} 件", "{n} result files left out of the verdicts"),
    "pooled_note": Text("判定は、このメジャーバージョンで同じ実験を実行したすべての結果 (このビルドの実行と保存された実行) のうち、"
                        "知見の最新の改訂 (登録) より後に始まったものをプールして出します。改訂のきっかけになった実行は"
                        "数えません。各実行を 1 単位とし、実行どうしのばらつきを区間に含めます。"
                        "実行が 1〜2 回のときは、実行どうしのばらつきとして実行自身の標準誤差の 2.5 倍まで"
                        "を見込み、3 回以上では実行の平均のばらつきそのものから区間を作ります。「プールした実行」を開くと、"
                        "各実行だけでの判定が見られます。",
                        "A verdict pools every result of the same experiment on this major (this build's run and the "
                        "stored ones) that started after the finding's latest revision (or registration); the runs "
                        "that led to a revision never count. Each run is one unit, and the interval includes how "
                        "much runs differ: with one or two runs it allows a spread between runs of up to 2.5 times "
                        "a run's own standard error, from three runs on it is made from the spread of the runs' "
                        "means. Open \"Runs pooled\" for each run's own verdict."),
    "revised_after": Text("この実行の後で主張を改訂 ({date}): 改訂後の主張で判定していますが、回数には数えません。",
                          "The claim was revised after this run ({date}): judged by the revised claim, never "
                          "counted for it."),
    "registered": Text("この章の主張 (内容、判定条件、要件、種類、期待) の登録簿は {date} に始まりました。以後の変更は改訂として記録し、"
                       "それより前の変更はコードの履歴と保存された判定から再構成して、変えた日付で載せています。",
                       "The register of this chapter's claims (claim, thresholds, requirements, kind, expected "
                       "flag) was started on {date}; every change since is recorded as a revision, and the "
                       "changes before it were reconstructed from the code's history and the stored verdicts, "
                       "under the dates they were made."),
    "revised": Text("改訂", "revised"),
    "declared": Text("宣言", "declared"),
    "withdrawn": Text("取り下げ", "withdrawn"),
    "kind": Text("種類", "Kind"),
    "on_majors": Text("{majors} で「{badge}」", "{badge} on {majors}"),
    "no_other_majors": Text("比べられるほかのメジャーバージョンの結果はまだありません。",
                            "There are no results on other majors to compare yet."),
    "same_everywhere": Text("測ったメジャーバージョン ({majors}) のすべてで、どの知見も判定は同じです。",
                            "On every major measured ({majors}) each finding has the same verdict."),
    "differ": Text("メジャーバージョンによって判定が変わる知見:", "Findings whose verdict differs between majors:"),
    "total": Text("計", "Total"),
    "summary_here": Text("PostgreSQL {major} での判定 (知見の種類ごと)", "Verdicts on PostgreSQL {major}, by kind of finding"),
    "summary_over": Text("結果のあるすべてのメジャーバージョンを通した判定 (知見の種類ごと)",
                         "Verdicts across every major with a result, by kind of finding"),
    "summary_note": Text("健全性の確認は実験の組み立て上必ず成り立つもので、何も再現しません。メジャーバージョンを通した判定は、"
                         "どれかのメジャーで (宣言した) 変化があれば「後のメジャーで変化」、判定したすべてのメジャーで同じなら"
                         "その判定 (一部のメジャーで判定できなければ「一部のメジャーで判定できず」)、宣言した変化がないのに"
                         "メジャーによって「再現した」と「再現しなかった」に分かれれば「メジャーで判定が分かれる」、"
                         "どのメジャーでも決まらなければ「判定できず」です。各知見のメジャーごとの範囲は、バージョンマトリクスに"
                         "あります。「他のメジャーが対象」は、ある範囲のメジャーについての知見 (たとえば 18 以降の読み込み"
                         "ストリーム) に付く印で、実行したマシンに何かが欠けていることを示すものではありません。",
                         "Sanity checks hold by construction and reproduce nothing. Across majors, a finding is "
                         "\"changed\" if some major changed it (as declared); it keeps the verdict every major that "
                         "decides it agrees on (\"undecided on some majors\" if some do not decide it); it is "
                         "\"decided differently by major\" if majors reproduce and contradict it without a declared "
                         "change, and \"inconclusive\" if no major decides it. The version matrix gives each finding's "
                         "ranges of majors. \"Applies to other majors\" marks a finding about a range of majors "
                         "(18's read stream, say), not something the machine that ran it lacks."),
    "changed_list": Text("PostgreSQL {major} で原典から変わった知見 (上の表の「後のメジャーで変化」)",
                         "Findings whose behaviour on PostgreSQL {major} differs from the original's (\"changed\" in the table above)"),
    "later_list": Text("PostgreSQL {major} より後のメジャーで変わる知見 (上の表では {major} での判定で数えています)",
                       "Findings that change in a major after PostgreSQL {major} (counted above by their verdict on {major})"),
    "none_changed": Text("(ありません)", "(none)"),
    "summary_stored": Text("注意: この集計の一部は、このビルドではなく保存された実行の結果です (各章のページに出所があります)。",
                           "Note: part of these counts comes from stored runs, not from this build (each chapter "
                           "page names its sources)."),
    "why": Text("理由", "Why"),
    "not_expected": Text("(この環境では成立を期待しない)", "(not expected to hold here)"),
    "missing": Text("この章の結果はまだありません。`make html` で実行されます。",
                    "This chapter has no result yet; `make html` runs it."),
    "corrupt": Text("結果ファイルが壊れています。", "The result file is corrupt."),
    "stale": Text("注意: 下の数値はこのビルドの実験コードで測ったものではありません ({why})。出所は {source} です。"
                  "{pooled}`make html` (REPRO=cached なし) で再実行されます。",
                  "Caution: the numbers below were not measured by this build's experiment code "
                  "({why}); they come from {source}.{pooled} `make html` without REPRO=cached runs the chapter "
                  "again."),
    "code_changed": Text("実験のコードが変わったため", "the experiment has changed"),
    "scale_changed": Text("スケールが `{scale}` のため", "it was run at {scale} scale"),
    "fresh": Text("ことわりのないかぎり、このページの数値は {source} の結果から求めたものです (実行時間 {duration} 秒)。"
                  "{pooled}別の実行からの表と図には、その出所を添えています。",
                  "Unless said otherwise, the numbers on this page come from {source}, which took {duration} s."
                  "{pooled} A table or chart from another run names its source."),
    "stale_mark": Text("(!) この結果は、このビルドの実験コードやスケールで測ったものではありません。",
                       "(!) this result was not measured with this build's experiment code or scale."),
    "no_result": Text("(結果なし)", "(no result)"),
    "chapter": Text("章", "Chapter"),
    "chapter_page": Text("章のページ: ", "Chapter page: "),
    "ledger_counts": Text("知見 {n} 件:", "{n} findings:"),
    "download": Text("この章の結果ファイル (JSON、すべてのメジャーバージョンと保存された実行):",
                     "This chapter's result files (JSON, every major and every stored run):"),
    "matrix_csv": Text("すべての章・メジャーバージョンの判定 (CSV、repro matrix --json と同じ項目)",
                       "Every chapter's verdicts on every major (CSV, the fields of repro matrix --json)"),
    "matrix_json": Text("同じもの (JSON)", "The same as JSON"),
    "results_zip": Text("すべての結果ファイル {n} 件 (ZIP)", "Every result file, {n} of them (ZIP)"),
    "download_csv": Text("すべての結果の判定と測定値 (CSV)", "The verdicts and values of every result (CSV)"),
    "unavailable": Text("実行できない", "cannot run"),
    "no_repository": Text("このビルドには公開リポジトリのアドレスが記録されていないため、"
                          "サイトの元になったソースを使ってください",
                          "this build records no public address of the repository; use the "
                          "source this site was built from"),
    "measured_where": Text("測定 (日付、スケール、マシン)", "Measured (date, scale, machine)"),
}
