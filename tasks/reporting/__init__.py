"""What a person reads: verdicts, terminal tables, markdown and HTML reports, SVG charts, run comparison, progress."""
