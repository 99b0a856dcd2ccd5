"""Reports: leaderboards (Markdown, JSON, CSV, terminal), the HTML site and replays."""
