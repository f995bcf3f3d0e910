"""The site's own words in both languages: status badges, table headings, banners."""
from __future__ import annotations

from ..text import Text
from ..verdict import CONTRADICTED, INCONCLUSIVE, NOT_APPLICABLE, REPRODUCED

STATUS = {
    REPRODUCED: Text("再現した", "reproduced"),
    CONTRADICTED: Text("再現しなかった", "contradicted"),
    INCONCLUSIVE: Text("判定できず", "inconclusive"),
    NOT_APPLICABLE: Text("この環境では対象外", "not applicable here"),
}
WORDS = {
    "finding": Text("知見", "Finding"),
    "claim": Text("内容", "Claim"),
    "original": Text("原典", "Original"),
    "measured": Text("本ビルドの測定値 [95% 信頼区間] と判定条件", "This build [95 % interval], and when it holds"),
    "condition": Text("条件", "holds if"),
    "status": Text("判定", "Verdict"),
    "held": Text("過去の実行で再現", "Held in stored runs"),
    "held_cell": Text("{k} / {n} 回", "{k} of {n}"),
    "why": Text("理由", "Why"),
    "not_expected": Text("(この環境では成立を期待しない)", "(not expected to hold here)"),
    "missing": Text("この章の結果はまだありません。`make html` で実行されます。",
                    "This chapter has no result yet; `make html` runs it."),
    "corrupt": Text("結果ファイルが壊れています。", "The result file is corrupt."),
    "stale": Text("注意: 下の数値はこのビルドの実験コードで測ったものではありません ({why})。"
                  "`make html` (REPRO=cached なし) で再実行されます。",
                  "Caution: the numbers below were not measured by this build's experiment code "
                  "({why}); `make html` without REPRO=cached runs the chapter again."),
    "code_changed": Text("実験のコードが変わっています", "the experiment has changed"),
    "scale_changed": Text("スケールが {scale} です", "it was run at {scale} scale"),
    "fresh": Text("このページの数値は、PostgreSQL {major} で {started} に {scale} スケールで実行した結果 "
                  "({duration} 秒) から生成されています。",
                  "The numbers on this page come from the run on PostgreSQL {major} of {started} "
                  "at {scale} scale ({duration} s)."),
    "stale_mark": Text("(!) この結果は、このビルドの実験コードやスケールで測ったものではありません。",
                       "(!) this result was not measured with this build's experiment code or scale."),
    "no_result": Text("(結果なし)", "(no result)"),
    "chapter": Text("章", "Chapter"),
    "download": Text("この結果 (JSON)", "This result (JSON)"),
    "interval": Text("[ ] 内は、ラウンドを単位としたブートストラップによる 95% 信頼区間です。",
                     "Brackets give the 95 % confidence interval, bootstrapped over rounds."),
    "unavailable": Text("実行できない", "cannot run"),
    "no_repository": Text("このビルドには公開されたリポジトリのアドレスが記録されていません。"
                          "サイトの元になったソースを使ってください",
                          "this build records no public address of the repository; use the "
                          "source this site was built from"),
    "measured_where": Text("測定 (日付、スケール、マシン)", "Measured (date, scale, machine)"),
}
