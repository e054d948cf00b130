package results

// Exploration is what an exploration (stockbench explore) concluded, kept in the record
// of its findings' reruns so that their report leads with the answer: whether a design
// is significantly worse than another, where, and how to see it again.
type Exploration struct {
	Designs []string `json:"designs"`
	// Answer is the exploration's conclusion in a line: the first significant
	// difference, or that no design is significantly worse, or, exploring one design,
	// what it found.
	Answer string `json:"answer"`
	// Differences are the significant ones, the smallest p first.
	Differences []Difference `json:"differences,omitempty"`
	// Comparisons is how many rates were compared (Holm's family); Alpha its error rate.
	Comparisons int     `json:"comparisons"`
	Alpha       float64 `json:"alpha"`
	// Regions are where the search found something, those with a difference first: in
	// each, the kind of finding whose rates tell the designs apart.
	Regions []Region `json:"regions,omitempty"`
}

// Difference is a design significantly worse than another in one region: a kind of
// finding's rates over reruns of the region's smallest sale, and Fisher's exact test of
// the two with Holm's adjustment.
type Difference struct {
	// Line says it in words, as the command prints it: "set-nx-ex is worse than token
	// here: LOCK-BROKEN 10/10 vs 0/10, p=1.1e-05 (Holm 0.0002); ...".
	Line   string `json:"line"`
	Worse  string `json:"worse"`
	Better string `json:"better"`
	Kind   string `json:"kind"`
	// WorseRate and BetterRate are "k/n": reruns that showed Kind, of those run.
	WorseRate  string  `json:"worse_rate"`
	BetterRate string  `json:"better_rate"`
	P          float64 `json:"p"`
	Holm       float64 `json:"p_holm"`
	Region     string  `json:"region"`
	// Smallest is the command that runs the region's smallest sale.
	Smallest string `json:"smallest"`
}

// Region is a region of the space where the search found something: its faults and
// timing, the kind of finding that tells the designs apart most (the largest spread of
// rates; the one the shrink kept when nothing was measured), each design's rate of it
// ("k/n", or "not measured"), and the command of its smallest sale ("" when the budget
// ended before it was shrunk).
type Region struct {
	Where string   `json:"where"`
	Kind  string   `json:"kind"`
	Rates []string `json:"rates"`
	// Differs says what differs significantly here, as "none worse by OVERSOLD,
	// LOCK-BROKEN: p=1.1e-05 (Holm 9.7e-05)"; empty where nothing does.
	Differs  string `json:"differs,omitempty"`
	Smallest string `json:"smallest,omitempty"`
}
