/*
 *  /MathJax-v2/localization/sk/FontWarnings.js
 *
 *  Copyright (c) 2009-2018 The MathJax Consortium
 *
 *  Licensed under the Apache License, Version 2.0 (the "License");
 *  you may not use this file except in compliance with the License.
 *  You may obtain a copy of the License at
 *
 *      http://www.apache.org/licenses/LICENSE-2.0
 *
 *  Unless required by applicable law or agreed to in writing, software
 *  distributed under the License is distributed on an "AS IS" BASIS,
 *  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 *  See the License for the specific language governing permissions and
 *  limitations under the License.
 */

MathJax.Localization.addTranslation("sk","FontWarnings",{version:"2.7.9",isLoaded:true,strings:{webFont:"MathJax pou\u017E\u00EDva k zobrazeniu matematiky na tejto str\u00E1nke webov\u00E9 p\u00EDsma. T\u00FDm trv\u00E1 stiahnutie nejak\u00FA dobu, tak\u017Ee str\u00E1nka by sa vykreslila r\u00FDchlej\u0161ie, ak by ste si tieto matematick\u00E9 p\u00EDsma nain\u0161talovali priamo do syst\u00E9movej zlo\u017Eky p\u00EDsiem.",imageFonts:"MathJax pou\u017E\u00EDva namiesto miestnych alebo webov\u00FDch p\u00EDsiem obr\u00E1zkov\u00E9 p\u00EDsmo. Preto bude vykres\u013Eovanie pomal\u0161ie ako je obvykl\u00E9 a pri tla\u010Di na Va\u0161ej tla\u010Diarni mo\u017Eno nebude matematika vykreslen\u00E1 v najlep\u0161om rozl\u00ED\u0161en\u00ED.",noFonts:"MathJax nedok\u00E1\u017Ee n\u00E1js\u0165 p\u00EDsmo, ktor\u00FDm by vykreslil matematiku, a obr\u00E1zkov\u00E9 p\u00EDsma nie s\u00FA k dispoz\u00EDcii, tak\u017Ee sa bude pou\u017E\u00EDva\u0165 be\u017En\u00E9 znaky Unicode v n\u00E1deji, \u017Ee ich v\u00E1\u0161 prehliada\u010D dok\u00E1\u017Ee zobrazi\u0165. Niektor\u00E9 znaky sa mo\u017Eno nezobrazia spr\u00E1vne alebo dokonca v\u00F4bec.",webFonts:"V\u00E4\u010D\u0161ina modern\u00FDch prehliada\u010Dov umo\u017E\u0148uje stiahnutie p\u00EDsiem cez web. Aktualiz\u00E1cia na nov\u0161iu verziu prehliada\u010Da (alebo zmena prehliada\u010Da) by mohla zlep\u0161i\u0165 zobrazenie matematiky na tejto str\u00E1nke.",fonts:"MathJax m\u00F4\u017Ee pou\u017E\u00EDva\u0165 bu\u010F [p\u00EDsma STIX](%1) alebo [MathJaxov\u00E9 TeXov\u00E9 p\u00EDsma](%2). Stiahnite a nain\u0161talujte si jedny z nich, aby ste si MathJax u\u017Eili lep\u0161ie.",STIXPage:"Tato str\u00E1nka je vytvoren\u00E1 na pou\u017Eitie s [p\u00EDsmami STIX](%1). Stiahnite a nain\u0161talujte si tieto p\u00EDsma, aby ste si lep\u0161ie u\u017Eili MathJax.",TeXPage:"Tato str\u00E1nka je vytvoren\u00E1 na pou\u017Eitie s [MathJaxov\u00FDmi TeXov\u00FDmi p\u00EDsmy](%1). Pre lep\u0161ie vyu\u017E\u00EDvanie MathJaxu si stiahnite a nain\u0161talujte tieto p\u00EDsma."}});MathJax.Ajax.loadComplete("[MathJax]/localization/sk/FontWarnings.js");
