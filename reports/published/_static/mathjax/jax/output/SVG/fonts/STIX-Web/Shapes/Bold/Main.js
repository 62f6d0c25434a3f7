/*
 *  /MathJax-v2/jax/output/SVG/fonts/STIX-Web/Shapes/Bold/Main.js
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

MathJax.OutputJax.SVG.FONTDATA.FONTS["STIXMathJax_Shapes-bold"]={directory:"Shapes/Bold",family:"STIXMathJax_Shapes",weight:"bold",id:"STIXWEBSHAPESB",32:[0,0,250,0,0,""],160:[0,0,250,0,0,""],9251:[31,120,500,40,460,"460 -120h-420v151h42v-76h336v76h42v-151"],9655:[791,284,1043,70,1008,"1008 253l-938 -537v1075zM831 253l-673 386v-772"],9665:[791,284,1043,35,973,"973 -284l-938 537l938 538v-1075zM885 -133v772l-673 -386"],9708:[811,127,1145,35,1110,"688 239c0 -63 -52 -115 -115 -115s-115 52 -115 115s52 115 115 115s115 -52 115 -115zM1110 -127h-1075l538 938zM958 -39l-385 673l-386 -673h771"],57344:[610,25,1184,808,912,"912 -25h-104v635h104v-635"],57345:[704,-75,1198,808,1224,"1224 600h-312v-525h-104v629h416v-104"],57520:[752,-531,0,100,417,"417 680h-245v-149h-72v221h317v-72"],57521:[-50,271,0,100,417,"417 -271h-317v72h245v149h72v-221"],57522:[-50,271,0,99,416,"416 -271h-317v221h72v-149h245v-72"],57614:[405,-101,714,211,503,"503 101h-88v304h88v-304zM299 101h-88v304h88v-304"],57615:[399,-107,315,0,315,"315 311h-315v88h315v-88zM315 107h-315v88h315v-88"],57999:[175,0,325,-1,326,"326 0h-327v175h327v-175"],58000:[175,0,633,-1,634,"634 0h-635v175h635v-175"]};MathJax.Ajax.loadComplete(MathJax.OutputJax.SVG.fontDir+"/Shapes/Bold/Main.js");
