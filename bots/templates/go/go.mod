module p10bot

go 1.19
